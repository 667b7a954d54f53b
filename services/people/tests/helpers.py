"""What the people tests share: inviting, joining and signing in through the API and the mail."""

from __future__ import annotations

import uuid
from urllib.parse import parse_qs, urlsplit

from testkit.mail import link_in, wait_for_mail


def address(name: str = "person") -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}@example.com"


def token_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["token"][0]


def invite(ws, email: str, role: str = "manager", key: str | None = None) -> dict:
    """Invite ``email``, by default as the operator (the one caller the answer shows the link to)."""
    r = ws.api.post(f"{ws.path}/members", key=key or ws.admin_token, json={"email": email, "role": role})
    assert r.status_code == 201, r.text
    return r.json()


def join(ws, email: str, role: str = "manager") -> dict:
    """Invite ``email`` as the operator and accept: the new member's session."""
    invitation = invite(ws, email, role)
    r = ws.api.post(f"{ws.path}/invitations/accept", json={"token": token_of(invitation["link"])})
    assert r.status_code == 201, r.text
    return r.json()


def mailed_link(maildir, email: str, path: str, after: int = 0) -> str:
    message = wait_for_mail(maildir, to=email, after=after)
    return link_in(message, "http")


def sign_in_by_mail(ws, maildir, email: str, after: int = 0) -> dict:
    r = ws.api.post(f"{ws.path}/sign-in/email", json={"email": email})
    assert r.status_code == 202, r.text
    link = mailed_link(maildir, email, "/sign-in/email", after)
    r = ws.api.post(f"{ws.path}/sign-in/email/redeem", json={"token": token_of(link)})
    assert r.status_code == 201, r.text
    return r.json()
