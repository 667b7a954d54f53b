"""Helpers of the web site's tests: a browser-like client of the pages, posts made via the API."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import requests


class Visitor:
    """A requests session that keeps the site's cookies, like a browser without JavaScript."""

    def __init__(self, stack_url: str, slug: str):
        self.base = stack_url.rstrip("/")
        self.slug = slug
        self.http = requests.Session()

    def url(self, path: str = "") -> str:
        return f"{self.base}/b/{self.slug}{path}"

    def get(self, path: str = "", **kw):
        return self.http.get(self.url(path), timeout=30, **kw)

    def post(self, path: str, data: dict, **kw):
        return self.http.post(self.url(path), data=data, timeout=30, allow_redirects=kw.pop("allow_redirects", True), **kw)

    def csrf(self, path: str = "") -> str:
        return csrf_of(self.get(path).text)


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no CSRF token in the page"
    return match.group(1)


def form_csrf(html: str, action: str) -> str:
    """The CSRF token of the form that posts to ``action`` (a page may hold several forms)."""
    match = re.search(rf'<form method="post" action="{re.escape(action)}"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"', html)
    assert match, f"no form posting to {action} in the page"
    return match.group(1)


def sso_sign_in(visitor: Visitor, token: str, **kw):
    """Follow a sign-in link as a person does: open it, then press "Continue". Returns both answers."""
    page = visitor.get("/sso?token=" + token, **kw)
    assert page.status_code == 200, page.text
    done = visitor.post("/sso", {"csrf": form_csrf(page.text, f"/b/{visitor.slug}/sso"), "token": token}, allow_redirects=False, **kw)
    return page, done


def invite(workspace, email: str, role: str = "owner") -> str:
    """Invite ``email`` to the team as the operator (the one caller shown the link): the invitation's link."""
    r = workspace.api.post(f"{workspace.path}/members", key=workspace.admin_token, json={"email": email, "role": role})
    assert r.status_code == 201, r.text
    return r.json()["link"]


def join_team(visitor: Visitor, link: str, **kw):
    """Accept an invitation as a person does: open its link, then press the button."""
    token = re.search(r"[?&]token=([^&#]+)", link).group(1)
    page = visitor.get("/join?token=" + token, **kw)
    assert page.status_code == 200, page.text
    return visitor.post("/join", {"csrf": form_csrf(page.text, f"/b/{visitor.slug}/join"), "token": token}, **kw)


def team_member(stack_url: str, workspace, email: str, role: str = "owner") -> Visitor:
    """A browser without JavaScript signed in as a new team member of ``workspace``."""
    visitor = Visitor(stack_url, workspace.slug)
    r = join_team(visitor, invite(workspace, email, role))
    # A new member lands on the board (an owner of a workspace without one on its first-run
    # setup), signed in as a member of the team.
    landed = (f"/b/{workspace.slug}", f"/b/{workspace.slug}/admin/setup")
    assert r.status_code == 200 and r.url.endswith(landed) and "(team)" in r.text, r.text
    return visitor


def vote_count(html: str, post_id: str) -> int:
    match = re.search(rf'data-post-id="{post_id}".*?data-count>(\d+)<', html, re.S)
    assert match, f"post {post_id} is not on the page"
    return int(match.group(1))


def create_post(workspace, title: str, content: str = "", board: str = "features", **identity) -> dict:
    r = workspace.api.post(f"{workspace.path}/posts", json={"boardSlug": board, "title": title, "content": content},
                           **(identity or {"key": workspace.key}))
    assert r.status_code == 201, r.text
    return r.json()


class Scripts(HTMLParser):
    """Every <script> element of a page, with its attributes and body."""

    def __init__(self):
        super().__init__()
        self.scripts: list[dict] = []
        self.handlers: list[str] = []
        self._open = None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.handlers.append(f"{tag} {name}={value}")
        if tag == "script":
            self._open = {"attrs": dict(attrs), "body": ""}
            self.scripts.append(self._open)

    def handle_data(self, data):
        if self._open is not None:
            self._open["body"] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._open = None


def scripts_of(html: str) -> Scripts:
    parser = Scripts()
    parser.feed(html)
    return parser
