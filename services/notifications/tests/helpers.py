"""What the notifications tests share: people signed in by emailed link, posts, and the mail
they receive (parsed back with Python's ``email`` package, from the stack's Maildir)."""

from __future__ import annotations

import time
import uuid
from email.message import EmailMessage
from pathlib import Path

from testkit.api import wait_for
from testkit.mail import messages, text_of

from services.people.tests.helpers import sign_in_by_mail


def address(name: str = "person") -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}@example.com"


class Person:
    """Someone signed in by an emailed link: their address, session token and person id."""

    def __init__(self, ws, maildir, name: str = "person"):
        self.email = address(name)
        session = sign_in_by_mail(ws, maildir, self.email)
        self.token = session["token"]
        self.ws = ws
        me = ws.api.get("/me", key=self.token).json()
        self.id = me["id"]

    def call(self, method: str, path: str, **kw):
        return self.ws.api.call(method, f"{self.ws.path}{path}", key=self.token, **kw)


def create_post(ws, author: Person | None = None, title: str = "Dark mode", content: str = "Please add a dark theme") -> dict:
    if author is None:
        r = ws.api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": title, "content": content})
    else:
        r = author.call("POST", "/posts", json={"boardSlug": "features", "title": title, "content": content})
    assert r.status_code == 201, r.text
    return r.json()


def set_status(ws, post_id: str, status: str, **extra) -> dict:
    r = ws.api.patch(f"{ws.path}/posts/{post_id}", key=ws.key, json={"statusSlug": status, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def mail_to(maildir, email: str, subject_part: str = "") -> list[EmailMessage]:
    """Every message to ``email`` whose subject holds ``subject_part`` (sign-in links are not notifications)."""
    return [m for m in messages(maildir) if m["To"].addresses[0].addr_spec == email and subject_part in str(m["Subject"])
            and "List-Unsubscribe" in m]


def wait_for_notification(maildir, email: str, subject_part: str = "", count: int = 1, timeout: float = 30) -> list[EmailMessage]:
    return wait_for(lambda: (found := mail_to(maildir, email, subject_part)) and len(found) >= count and found,
                    timeout=timeout, what=f"{count} notification(s) '{subject_part}' to {email}")


def quiet(maildir, emails: list[str], seconds: float = 2.0) -> None:
    """Assert nothing is mailed to ``emails`` for ``seconds`` (after an event that must not mail them,
    and after a later one that does mail someone else: the consumer handles a workspace's events in order)."""
    time.sleep(seconds)
    for email in emails:
        assert mail_to(maildir, email) == [], f"{email} was mailed: {[m['Subject'] for m in mail_to(maildir, email)]}"


def unsubscribe_link(message: EmailMessage) -> str:
    return message["List-Unsubscribe"].strip("<>")


def raw_header_lines(maildir, message: EmailMessage) -> list[bytes]:
    """The header lines of ``message`` as the SMTP server took them (its file in the Maildir,
    found by its Message-ID), before any parser decoded them."""
    marker = f"Message-ID: {message['Message-ID']}".encode()
    for sub in ("new", "cur"):
        for path in (Path(maildir) / sub).iterdir():
            raw = path.read_bytes().replace(b"\r\n", b"\n")
            headers = raw.split(b"\n\n", 1)[0]
            if marker in headers.split(b"\n"):
                return headers.split(b"\n")
    raise AssertionError(f"no file in {maildir} holds {marker!r}")


def body(message: EmailMessage) -> str:
    return text_of(message)
