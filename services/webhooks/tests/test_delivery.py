"""Events caused through the gateway reach a real receiver, signed (Standard Webhooks)."""

from __future__ import annotations

from testkit import wait_for
from .helpers import publish_changelog


def test_changelog_published_is_delivered_signed(hooks, receiver, api, workspace):
    route = receiver.route()
    hook = hooks.create(route, events=["changelog.published"])
    assert hook["secret"].startswith("whsec_")
    entry = publish_changelog(api, workspace)

    [got] = wait_for(lambda: route.received, what="a delivery")
    assert got.verified_with == route.secrets
    body = got.json()
    assert body["type"] == "changelog.published"
    assert body["data"]["id"] == entry["id"] and body["data"]["publishedAt"] == entry["publishedAt"]
    assert got.id.startswith("msg_")
    assert got.headers["content-type"] == "application/json"

    [delivery] = wait_for(lambda: [d for d in hooks.deliveries(hook["id"]) if d["status"] == "succeeded"])
    assert delivery["messageId"] == got.id and delivery["attemptCount"] == 1
    assert delivery["attempts"][0]["statusCode"] == 200 and delivery["nextAttemptAt"] is None
