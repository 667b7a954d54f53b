"""What the site answers, and what it makes of the API's answers for its templates.

The site's rules (``service.py``) return a :class:`Page` to render, a :class:`Redirect`, a
:class:`Json` or an :class:`Asset`; ``resources.py`` writes it. The functions below turn ``/v1`` answers into what a
template shows, and hold no rule of who may see what: that is the API's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode

import jwt

# Comments deeper than this are shown at this depth (the page stays readable on a phone).
MAX_SHOWN_DEPTH = 6
DEFAULT_COLOR = "#2563eb"
HEX_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")


@dataclass
class Page:
    """A template rendered with ``context`` (beside what every page gets: the visitor, the site's base path)."""

    template: str
    context: dict
    status: int = 200


@dataclass
class Redirect:
    """A 303 to ``location`` (a path of this site), after a form."""

    location: str


@dataclass
class Json:
    """An answer to the site's own script (a passkey ceremony's steps): ``body`` as JSON."""

    body: dict
    status: int = 200


@dataclass
class Asset:
    """A file the same for every visitor (a stylesheet, a script), cached by browsers for ``max_age`` seconds."""

    body: bytes
    content_type: str
    max_age: int


def error_page(status: int, message: str) -> Page:
    return Page("error.html", {"message": message, "status": status}, status)


def thread(comments: list[dict]) -> list[dict]:
    """The API's comments (thread order: a parent before its replies), each with the ``depth``
    it is indented by."""
    depth: dict[str, int] = {}
    for comment in comments:
        depth[comment["id"]] = depth.get(comment["parentId"], -1) + 1 if comment["parentId"] else 0
        comment["depth"] = min(depth[comment["id"]], MAX_SHOWN_DEPTH)
    return comments


def published(entries: list[dict]) -> list[dict]:
    """The changelog's published entries, newest first."""
    return sorted((e for e in entries if e.get("publishedAt")), key=lambda e: e["publishedAt"], reverse=True)


def board_link(slug: str, state: dict, **change) -> str:
    """The board's address with its filters (``state``), some changed; empty ones left out."""
    merged = {**state, **change}
    return f"/b/{slug}?" + urlencode({k: v for k, v in merged.items() if v not in ("", None, 0)})


def theme_css(branding: dict) -> Asset:
    """The workspace's primary colour as a stylesheet (the CSP allows no inline style); a value
    that is not a colour is not written into CSS."""
    color = branding.get("primaryColor") or DEFAULT_COLOR
    if not HEX_COLOR.fullmatch(color):
        color = DEFAULT_COLOR
    return Asset(f":root {{ --primary: {color}; }}\n".encode(), "text/css; charset=utf-8", 60)


def account(token: str) -> dict:
    """Whom a user token names, to show: its claims read without checking the signature, so
    only for a token the API has accepted (or one already kept in a session)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        claims = {}
    name = claims.get("name") if isinstance(claims.get("name"), str) else ""
    user = claims.get("id") or claims.get("email")
    user = str(user) if isinstance(user, (str, int)) else ""
    return {"name": name.strip(), "id": user, "label": name.strip() or user or "this account"}
