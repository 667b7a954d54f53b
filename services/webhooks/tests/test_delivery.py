"""Events caused through the gateway reach a real receiver, signed (Standard Webhooks)."""

from __future__ import annotations

import time

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


def test_a_dripping_receiver_does_not_delay_other_workspaces(hooks, receiver, api, workspace, other_workspace):
    """A receiver that sends one byte of its answer at a time, each inside the read timeout,
    holds an attempt only until the attempt's deadline, and at most WEBHOOK_ENDPOINT_CONCURRENCY
    sender threads while it does: another workspace's deliveries go through meanwhile."""
    from .helpers import TIMEOUT, Hooks
    from .receiver import Reply

    drip = receiver.route().answer(then=Reply(drip=TIMEOUT / 3))
    hook = hooks.create(drip, events=["changelog.published"])
    for n in range(20):  # more deliveries than the dispatcher has sender threads
        publish_changelog(api, workspace, n)
    wait_for(lambda: len(drip.received) >= 4, what="the dripping endpoint to be attempted")

    healthy = receiver.route()
    other = Hooks(api, other_workspace)
    other.create(healthy, events=["changelog.published"])
    started = time.monotonic()
    publish_changelog(api, other_workspace)
    wait_for(lambda: healthy.received, timeout=10, what="the other workspace's delivery")
    assert time.monotonic() - started < TIMEOUT * 2, "it waited behind the dripping receiver"

    failed = wait_for(lambda: [d for d in hooks.deliveries(hook["id"]) if d["attemptCount"] >= 1], what="dripping attempts to end")
    assert all("timeout" in (d["attempts"][-1]["error"] or "") for d in failed), "each attempt ended at its deadline"
