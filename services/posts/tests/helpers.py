"""Helpers the posts service's tests share (the ``board`` fixture is in conftest.py)."""

from __future__ import annotations

import uuid

from common import auth


class Board:
    """A workspace with one board, and shortcuts for the calls tests repeat."""

    def __init__(self, workspace, slug: str = "features"):
        self.ws = workspace
        self.api = workspace.api
        self.slug = slug
        self.board = workspace.board(slug, "Feature requests")

    @property
    def path(self) -> str:
        return f"{self.ws.path}/posts"

    def post(self, title: str = "A post", content: str = "Some **markdown**", key=None, user=None, headers=None, board=None):
        kw = {"key": key} if key else {"user": user} if user else {"key": self.ws.key}
        r = self.api.post(self.path, json={"boardSlug": board or self.slug, "title": title, "content": content}, headers=headers, **kw)
        assert r.status_code == 201, r.text
        return r.json()

    def user(self, name: str | None = None) -> str:
        return self.ws.user_token(name or f"u-{uuid.uuid4().hex[:8]}")

    def vote(self, post_id: str, **kw):
        return self.api.post(f"{self.path}/{post_id}/vote", **kw)

    def get(self, post_id: str, **kw):
        return self.api.get(f"{self.path}/{post_id}", **kw)

    def manager_get(self, post_id: str) -> dict:
        r = self.get(post_id, key=self.ws.key)
        assert r.status_code == 200, r.text
        return r.json()


def anon(anon_id: str | None = None) -> dict:
    return {"X-Feedback-Anonymous-Id": anon_id or uuid.uuid4().hex}


def manager(slug: str) -> auth.Caller:
    """A manager of ``slug``, for tests that call the service layer in process."""
    return auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="k1")
