"""Mail in tests: a real SMTP server keeping what it takes in a Maildir, and what arrived.

The platform the ``stack`` fixture starts has one already (``stack.mail_dir``, or the
``maildir`` fixture); :func:`smtp_server` starts another for a test of its own::

    with smtp_server(tmp_path / "mail") as server:      # server.url: smtp://127.0.0.1:<port>
        ...
        message = wait_for_mail(server.folder, to="ann@example.com")
        link = link_in(message, f"{stack.url}/signin/")
"""

from __future__ import annotations

import email.policy
import re
import time
from contextlib import contextmanager
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

from devstack import LocalMailServer

URL = re.compile(r"https?://[^\s<>\"')\]]+")


@contextmanager
def smtp_server(folder: Path, **options) -> Iterator[LocalMailServer]:
    """A real SMTP server (aiosmtpd) on a free loopback port for the ``with`` block, keeping
    every message as a file in the Maildir ``folder``. ``options`` go to aiosmtpd's
    ``Controller``: ``tls_context=`` offers STARTTLS, ``ssl_context=`` speaks TLS from the
    first byte, ``authenticator=`` with ``auth_require_tls=`` asks for a login."""
    with LocalMailServer(folder, **options) as server:
        yield server


# Every message read so far, by its file: a Maildir file is written once under a name of its
# own and never changed, so each is parsed once. (The stack's Maildir keeps a whole session's
# mail, thousands of messages; parsing them all on every look starved the SMTP server, which
# runs in the test process.)
_read: dict[Path, tuple[int, EmailMessage]] = {}


def messages(folder: Path) -> list[EmailMessage]:
    """Every message delivered to the Maildir ``folder`` (a file each in ``new/``, or in
    ``cur/`` once a mail client saw it), oldest first."""
    found = []
    for sub in ("new", "cur"):
        if (Path(folder) / sub).is_dir():
            for path in (Path(folder) / sub).iterdir():
                if path not in _read:
                    _read[path] = (path.stat().st_mtime_ns, email.message_from_bytes(path.read_bytes(), policy=email.policy.default))
                found.append((_read[path][0], path.name, _read[path][1]))
    found.sort(key=lambda entry: entry[:2])
    return [message for _, _, message in found]


def wait_for_mail(folder: Path, to: str | None = None, timeout: float = 10.0, after: int = 0) -> EmailMessage:
    """The first message in the Maildir ``folder`` addressed to ``to`` (any, if None), skipping
    the first ``after`` such messages, as soon as it is there (looking every 50 ms); fails the
    test after ``timeout`` seconds, saying what did arrive."""
    deadline = time.monotonic() + timeout
    while True:
        found = [m for m in messages(folder) if to is None or _addressed_to(m, to)]
        if len(found) > after:
            return found[after]
        if time.monotonic() > deadline:
            arrived = [f"{m['To']}: {m['Subject']}" for m in messages(folder)]
            raise AssertionError(f"no mail to {to or 'anyone'} in {folder} within {timeout}s; arrived: {arrived}")
        time.sleep(0.05)


def link_in(message: EmailMessage, prefix: str) -> str:
    """The first URL in ``message``'s text part that starts with ``prefix`` (a whole URL, or a
    path such as ``/b/acme/join?``: the URL's path and query then start with it); fails the test
    if none does."""
    text = text_of(message)
    for url in URL.findall(text):
        parts = urlsplit(url)
        if url.startswith(prefix) or (parts.path + ("?" + parts.query if parts.query else "")).startswith(prefix):
            return url
    raise AssertionError(f"no link starting with {prefix} in:\n{text}")


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    if part is None:
        raise AssertionError(f"no text part in the message {message['Subject']!r}")
    return part.get_content()


def html_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    if part is None:
        raise AssertionError(f"no HTML part in the message {message['Subject']!r}")
    return part.get_content()


def _addressed_to(message: EmailMessage, to: str) -> bool:
    return to.lower() in {address.lower() for _, address in getaddresses(message.get_all("To", []))}


def unmarked(message, kept=()) -> list[str]:
    """The English words of ``message`` (its subject, text and what its HTML shows) outside the
    pseudo-locale's ⟦⟧ (docs/languages.md): words the catalogs never saw. ``kept``: user
    content, shown as written; links and addresses are left aside."""
    shown = re.sub(r"<style.*?</style>|<[^>]*>", " ", message.html, flags=re.S)
    words = []
    for text in (message.subject, message.text, shown):
        text = re.sub(r"⟦.*?⟧|https?://\S+|[\w.+-]+@[\w.-]+|&#?\w+;", " ", text, flags=re.S)
        for name in kept:
            text = text.replace(name, " ")
        words += re.findall(r"[A-Za-z]{2,}", text)
    return words
