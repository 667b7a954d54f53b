"""Retries, Retry-After, timeouts, 410, redirects, disabling and secret rotation, against the
real receiver (the stack runs with the schedule scaled down, see conftest.py)."""

from __future__ import annotations

import time

import pytest

from testkit import wait_for
from .helpers import DISABLE_AFTER, ROTATION_WINDOW, TIMEOUT
from .receiver import Reply


def statuses(delivery: dict) -> list:
    return [a["statusCode"] for a in delivery["attempts"]]


def test_fails_twice_then_succeeds(hooks, receiver):
    route = receiver.route().answer(Reply(500), Reply(502))
    hook = hooks.create(route)
    ping = hooks.ping(hook["id"])
    done = hooks.settled(hook["id"], ping["id"])
    assert done["status"] == "succeeded"
    assert statuses(done) == [500, 502, 200] and done["attemptCount"] == 3
    got = route.received
    assert len(got) == 3 and len({r.id for r in got}) == 1  # one webhook-id across retries
    assert all(r.verified_with for r in got)
    assert hooks.get(hook["id"])["disabled"] is False


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(hooks, receiver, status):
    route = receiver.route().answer(Reply(status, {"Retry-After": "2"}))
    hook = hooks.create(route)
    ping = hooks.ping(hook["id"])
    done = hooks.settled(hook["id"], ping["id"])
    assert statuses(done) == [status, 200]
    first, second = route.received
    # The scaled schedule alone would retry within milliseconds.
    assert second.at - first.at >= 1.9


def test_timeout_is_a_failed_attempt(hooks, receiver):
    route = receiver.route().answer(Reply(200, delay=TIMEOUT + 1))
    hook = hooks.create(route)
    ping = hooks.ping(hook["id"])
    done = hooks.settled(hook["id"], ping["id"], timeout=30)
    assert done["status"] == "succeeded"
    first, second = done["attempts"]
    assert first["statusCode"] is None and first["error"].startswith("timeout")
    assert second["statusCode"] == 200
    assert len({r.id for r in route.received}) == 1


def test_gone_disables_at_once_and_publishes_webhook_disabled(hooks, receiver):
    watcher_route = receiver.route()
    watcher = hooks.create(watcher_route, events=["webhook.disabled"])
    route = receiver.route().answer(then=Reply(410))
    hook = hooks.create(route)
    ping = hooks.ping(hook["id"])
    done = hooks.settled(hook["id"], ping["id"])
    assert done["status"] == "failed" and statuses(done) == [410]
    # The endpoint is disabled right after the outcome is written (the sender's next step), not
    # in the same write: a read between the two sees the delivery settled and the endpoint not yet.
    got = wait_for(lambda: (g := hooks.get(hook["id"]))["disabled"] and g, what="the endpoint disabled")
    assert got["disabledReason"] == "gone"

    [event] = wait_for(lambda: watcher_route.of_type("webhook.disabled"), what="webhook.disabled")
    assert event.verified_with == watcher_route.secrets
    assert event.json()["data"]["id"] == hook["id"] and event.json()["data"]["disabledReason"] == "gone"
    assert len(route.received) == 1
    assert hooks.get(watcher["id"])["disabled"] is False


def test_redirects_are_not_followed(hooks, receiver):
    target = receiver.route()
    route = receiver.route().answer(Reply(302, {"Location": target.url}), then=Reply(302, {"Location": target.url}))
    hook = hooks.create(route)
    ping = hooks.ping(hook["id"])
    delivery = wait_for(lambda: (d := hooks.delivery(hook["id"], ping["id"]))["attemptCount"] >= 2 and d)
    assert statuses(delivery)[:2] == [302, 302]
    assert len(route.received) >= 2 and target.received == []


def test_failing_endpoint_is_disabled_after_the_span(hooks, receiver):
    watcher_route = receiver.route()
    hooks.create(watcher_route, events=["webhook.disabled"])
    route = receiver.route().answer(then=Reply(500))
    hook = hooks.create(route)
    started = time.monotonic()
    ping = hooks.ping(hook["id"])
    got = wait_for(lambda: (h := hooks.get(hook["id"]))["disabled"] and h, timeout=DISABLE_AFTER + 30, interval=0.3)
    assert got["disabledReason"] == "failing"
    assert time.monotonic() - started >= DISABLE_AFTER  # not before the span has passed
    [event] = wait_for(lambda: watcher_route.of_type("webhook.disabled"))
    assert event.json()["data"]["id"] == hook["id"]

    # Once disabled nothing more is attempted: the pending retry is cancelled.
    done = hooks.settled(hook["id"], ping["id"])
    assert done["status"] == "cancelled"
    count = len(route.received)
    assert all(s == 500 for s in statuses(done)) and done["attemptCount"] == count


def test_rotation_signs_with_both_secrets_during_the_window(hooks, receiver, api, workspace):
    route = receiver.route()
    hook = hooks.create(route)
    old = hook["secret"]
    r = api.post(f"{hooks.base}/{hook['id']}/rotate-secret", key=workspace.key)
    assert r.status_code == 200, r.text
    rotated_at = time.monotonic()
    new = r.json()["secret"]
    assert new.startswith("whsec_") and new != old and r.json()["id"] == hook["id"]
    assert "secret" not in hooks.get(hook["id"])
    route.secrets[:] = [old, new]

    hooks.ping(hook["id"])
    [during] = wait_for(lambda: route.received)
    assert during.verified_with == [old, new]  # each secret alone verifies the delivery
    assert len(during.headers["webhook-signature"].split(" ")) == 2

    time.sleep(max(0.0, ROTATION_WINDOW - (time.monotonic() - rotated_at)) + 0.5)
    hooks.ping(hook["id"])
    wait_for(lambda: len(route.received) == 2)
    after = route.received[1]
    assert after.verified_with == [new]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
