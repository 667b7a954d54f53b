"""What tests use to talk to the platform: an API client, workspaces, and small helpers."""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass

import jwt
import requests


class Api:
    """A thin requests wrapper: paths are relative to /v1; ``key``/``user`` pick the caller."""

    def __init__(self, base_url: str):
        self.base = base_url.rstrip("/") + "/v1"
        self.http = requests.Session()

    def call(self, method: str, path: str, *, key: str | None = None, user: str | None = None, headers=None, **kw):
        h = dict(headers or {})
        if key:
            h["Authorization"] = f"Bearer {key}"
        if user:
            h["X-Feedback-User"] = user
        return self.http.request(method, self.base + path, headers=h, timeout=30, **kw)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, **kw):
        return self.call("POST", path, **kw)

    def put(self, path, **kw):
        return self.call("PUT", path, **kw)

    def patch(self, path, **kw):
        return self.call("PATCH", path, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)


@dataclass
class Workspace:
    slug: str
    key: str  # a manager API key
    api: Api
    sso_secret: str | None = None
    # The operator's token: the one caller an invitation's link is shown to (others get it by mail).
    admin_token: str | None = None

    @property
    def path(self) -> str:
        return f"/workspaces/{self.slug}"

    def user_token(self, user_id: str = "user-1", **claims) -> str:
        """An end-user JWT; sets the workspace's ssoSecret on first use."""
        if self.sso_secret is None:
            self.sso_secret = "s3cret-" + uuid.uuid4().hex
            r = self.api.patch(f"{self.path}/settings", key=self.key, json={"ssoSecret": self.sso_secret})
            assert r.status_code == 200, r.text
        payload = {"id": user_id, "name": f"User {user_id}", "exp": int(time.time()) + 3600, "aud": self.slug, **claims}
        return jwt.encode(payload, self.sso_secret, algorithm="HS256")

    def settings(self, **fields) -> dict:
        r = self.api.patch(f"{self.path}/settings", key=self.key, json=fields)
        assert r.status_code == 200, r.text
        return r.json()

    def board(self, slug: str = "features", name: str = "Feature requests") -> dict:
        r = self.api.post(f"{self.path}/boards", key=self.key, json={"slug": slug, "name": name})
        assert r.status_code == 201, r.text
        return r.json()


def assert_error(r, status: int) -> str:
    """``r`` answered ``status`` with exactly ``{"error": "<non-empty string>", "code": "<name>"}``,
    where the request broke its schema (400, 413) with its ``"errors": [{"field", "message",
    "code"}, ...]`` beside it (docs/architecture.md, the status table); return the message."""
    assert r.status_code == status, r.text
    body = r.json()
    assert isinstance(body.get("error"), str) and body["error"], r.text
    assert isinstance(body.get("code"), str) and CODE.fullmatch(body["code"]), r.text
    if set(body) != {"error", "code"}:
        assert status in (400, 413) and set(body) == {"error", "code", "errors"}, r.text
        assert body["errors"] and all(set(e) == {"field", "message", "code"} for e in body["errors"]), r.text
    return body["error"]


CODE = re.compile(r"[a-z][a-z0-9_]*")  # an error's stable name (docs/languages.md)


def unique_slug(prefix: str = "ws") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for(check, timeout: float = 20.0, interval: float = 0.1, what: str = "condition"):
    """Poll ``check()`` until it returns something truthy; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def create_workspace(api: Api, admin_token: str, slug: str | None = None, name: str = "Acme") -> Workspace:
    slug = slug or unique_slug()
    r = api.post("/workspaces", key=admin_token, json={"slug": slug, "name": name})
    assert r.status_code == 201, r.text
    return Workspace(slug=slug, key=r.json()["apiKey"], api=api, admin_token=admin_token)
