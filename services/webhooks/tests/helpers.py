"""Helpers of the webhooks tests: webhook calls through the gateway, events to cause, and
callers of the service layer in process."""

from __future__ import annotations

from common import auth
from testkit import wait_for

# A public address literal: https, no DNS, never called (in process, the test process's own
# configuration refuses plain http and private addresses).
URL = "https://93.184.215.14/hook"

# The settings conftest.py gives the stack's webhooks processes.
TIMEOUT = 2.0  # seconds per attempt
RETRY_SCALE = 0.0001  # 5 s -> 0.5 ms, 5 min -> 30 ms, ... 24 h -> 8.6 s
DISABLE_AFTER = 6.0  # seconds of failing without a success
ROTATION_WINDOW = 12.0  # seconds an old secret keeps signing


class Hooks:
    """Webhook calls of one workspace through the gateway."""

    def __init__(self, api, workspace):
        self.api = api
        self.ws = workspace
        self.base = f"{workspace.path}/webhooks"

    def create(self, route, events=None, expect=201) -> dict:
        body = {"url": route.url} if events is None else {"url": route.url, "events": events}
        r = self.api.post(self.base, key=self.ws.key, json=body)
        assert r.status_code == expect, r.text
        hook = r.json()
        route.secrets.append(hook["secret"])
        return hook

    def get(self, hook_id: str) -> dict:
        r = self.api.get(f"{self.base}/{hook_id}", key=self.ws.key)
        assert r.status_code == 200, r.text
        return r.json()

    def deliveries(self, hook_id: str, **params) -> list[dict]:
        r = self.api.get(f"{self.base}/{hook_id}/deliveries", key=self.ws.key, params=params)
        assert r.status_code == 200, r.text
        return r.json()["items"]

    def delivery(self, hook_id: str, delivery_id: str) -> dict:
        r = self.api.get(f"{self.base}/{hook_id}/deliveries/{delivery_id}", key=self.ws.key)
        assert r.status_code == 200, r.text
        return r.json()

    def ping(self, hook_id: str) -> dict:
        r = self.api.post(f"{self.base}/{hook_id}/test", key=self.ws.key)
        assert r.status_code == 201, r.text
        return r.json()

    def settled(self, hook_id: str, delivery_id: str, timeout: float = 30) -> dict:
        """Wait until the delivery is no longer pending; return it."""
        return wait_for(
            lambda: (d := self.delivery(hook_id, delivery_id))["status"] != "pending" and d,
            timeout=timeout,
            interval=0.2,
            what=f"delivery {delivery_id} to settle",
        )


def publish_changelog(api, workspace, n: int = 0) -> dict:
    """Publish a changelog entry through the gateway (a changelog.published event)."""
    r = api.post(
        f"{workspace.path}/changelogs",
        key=workspace.key,
        json={"title": f"Release {n}", "slug": f"release-{n}", "content": "Shipped **things**.", "publish": True},
    )
    assert r.status_code == 201, r.text
    return r.json()


def manager(slug: str) -> auth.Caller:
    """A manager of ``slug``, for tests that call the service layer in process."""
    return auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="k")
