"""The webhooks API through the gateway: shapes, validation, roles, test pings, the delivery log."""

from __future__ import annotations

import pytest

from testkit import create_workspace, wait_for
from .helpers import Hooks, publish_changelog

SHAPE = {"id", "url", "events", "disabled", "disabledReason", "createdAt", "updatedAt"}


def test_create_returns_the_secret_once(hooks, receiver, api, workspace):
    route = receiver.route()
    created = hooks.create(route, events=["post.created", "changelog.published", "post.created"])
    assert set(created) == SHAPE | {"secret"}
    assert created["url"] == route.url
    assert created["events"] == ["post.created", "changelog.published"]  # duplicates dropped
    assert created["disabled"] is False and created["disabledReason"] is None
    assert created["secret"].startswith("whsec_") and len(created["secret"]) >= 6 + 32
    assert len(created["id"]) == 24

    got = hooks.get(created["id"])
    assert set(got) == SHAPE and got["id"] == created["id"]
    r = api.get(hooks.base, key=workspace.key)
    assert r.status_code == 200
    assert [h["id"] for h in r.json()["items"]] == [created["id"]]
    assert "secret" not in r.json()["items"][0]
    assert created["secret"] not in r.text


def test_absent_or_empty_events_mean_all(hooks, receiver, api, workspace):
    route = receiver.route()
    assert hooks.create(route)["events"] == []
    second = receiver.route()
    assert hooks.create(second, events=[])["events"] == []
    workspace.board("ideas", "Ideas")  # workspace.updated
    publish_changelog(api, workspace)  # changelog.published
    for r in (route, second):
        wait_for(lambda r=r: {"workspace.updated", "changelog.published"} <= {x.json()["type"] for x in r.received})
        assert all(x.verified_with for x in r.received)


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "field 'url' is required"),
        ({"url": ""}, "field 'url' must not be empty"),
        ({"url": 5}, "field 'url' must be of type string"),
        ({"url": "/relative/path"}, "field 'url' must be an absolute http(s) URL"),
        ({"url": "ftp://127.0.0.1/x"}, "field 'url' must be an absolute http(s) URL"),
        ({"url": "http://user:pw@127.0.0.1/x"}, "field 'url' must not contain credentials"),
        ({"url": "http://127.0.0.1:99999/x"}, "field 'url' is not a valid URL"),
        ({"url": "http://127.0.0.1/x", "events": ["post.exploded"]}, "unknown event type(s): post.exploded"),
        ({"url": "http://127.0.0.1/x", "events": "post.created"}, "field 'events' must be of type array"),
        ({"url": "http://127.0.0.1/x", "extra": 1}, "unknown field(s): extra"),
    ],
)
def test_create_validation(api, workspace, body, message):
    r = api.post(f"{workspace.path}/webhooks", key=workspace.key, json=body)
    assert r.status_code == 400, r.text
    assert message in r.json()["error"]


def test_roles(api, workspace, other_workspace, admin_token, receiver):
    path = f"{workspace.path}/webhooks"
    body = {"url": receiver.route().url}
    assert api.post(path, json=body).status_code == 401
    assert api.get(path).status_code == 401
    assert api.post(path, user=workspace.user_token("u1"), json=body).status_code == 403
    assert api.post(path, key=other_workspace.key, json=body).status_code == 403
    assert api.post(path, key=admin_token, json=body).status_code == 201
    r = api.post("/workspaces/no-such-workspace-xyz/webhooks", key=admin_token, json=body)
    assert r.status_code == 404 and "not found" in r.json()["error"]


def test_unknown_and_foreign_ids_are_404(hooks, api, workspace, other_workspace, receiver):
    hook = hooks.create(receiver.route())
    for bad in ("not-an-id", "0" * 24):
        assert api.get(f"{hooks.base}/{bad}", key=workspace.key).status_code == 404
        assert api.get(f"{hooks.base}/{hook['id']}/deliveries/{bad}", key=workspace.key).status_code == 404
    # another workspace's manager cannot see it under their own slug
    assert api.get(f"{other_workspace.path}/webhooks/{hook['id']}", key=other_workspace.key).status_code == 404


def test_patch_and_delete(hooks, api, workspace, receiver):
    hook = hooks.create(receiver.route())
    new_url = receiver.route().url
    r = api.patch(f"{hooks.base}/{hook['id']}", key=workspace.key, json={"url": new_url, "events": ["vote.created"]})
    assert r.status_code == 200, r.text
    assert r.json()["url"] == new_url and r.json()["events"] == ["vote.created"] and "secret" not in r.json()

    r = api.patch(f"{hooks.base}/{hook['id']}", key=workspace.key, json={"disabled": True})
    assert r.json()["disabled"] is True and r.json()["disabledReason"] == "manual"
    assert api.post(f"{hooks.base}/{hook['id']}/test", key=workspace.key).status_code == 409
    r = api.patch(f"{hooks.base}/{hook['id']}", key=workspace.key, json={"disabled": False})
    assert r.json()["disabled"] is False and r.json()["disabledReason"] is None

    for body, message in [
        ({"events": ["nope"]}, "unknown event type(s): nope"),
        ({"disabled": "yes"}, "field 'disabled' must be of type boolean"),
        ({"url": "http://10.0.0.1/x"}, "field 'url' resolves to 10.0.0.1"),
    ]:
        r = api.patch(f"{hooks.base}/{hook['id']}", key=workspace.key, json=body)
        assert r.status_code == 400 and message in r.json()["error"], r.text

    r = api.delete(f"{hooks.base}/{hook['id']}", key=workspace.key)
    assert r.status_code == 200 and r.json()["id"] == hook["id"]
    assert api.get(f"{hooks.base}/{hook['id']}", key=workspace.key).status_code == 404
    assert api.delete(f"{hooks.base}/{hook['id']}", key=workspace.key).status_code == 404


def test_ping_delivery_log_and_resend(hooks, receiver, api, workspace):
    route = receiver.route()
    hook = hooks.create(route)
    ping = hooks.ping(hook["id"])
    assert ping["type"] == "webhook.test" and ping["status"] == "pending"
    assert ping["payload"]["data"]["webhookId"] == hook["id"]

    [got] = wait_for(lambda: route.received)
    assert got.verified_with == route.secrets and got.id == ping["messageId"]
    assert got.json() == ping["payload"]
    done = hooks.settled(hook["id"], ping["id"])
    assert done["status"] == "succeeded" and done["attempts"][0]["statusCode"] == 200

    [listed] = hooks.deliveries(hook["id"])
    assert listed["id"] == ping["id"] and "payload" not in listed
    assert hooks.deliveries(hook["id"], status="failed") == []
    r = api.get(f"{hooks.base}/{hook['id']}/deliveries", key=workspace.key, params={"status": "bogus"})
    assert r.status_code == 400

    r = api.post(f"{hooks.base}/{hook['id']}/deliveries/{ping['id']}/resend", key=workspace.key)
    assert r.status_code == 200, r.text
    wait_for(lambda: len(route.received) == 2)
    assert route.received[1].id == got.id  # a resend keeps the webhook-id
    again = hooks.settled(hook["id"], ping["id"])
    assert again["attemptCount"] == 2 and [a["statusCode"] for a in again["attempts"]] == [200, 200]


def test_webhooks_of_one_workspace_get_only_its_events(hooks, receiver, api, admin_token):
    mine_route, other_route = receiver.route(), receiver.route()
    mine_hook = hooks.create(mine_route, events=["changelog.published"])
    other = create_workspace(api, admin_token)
    Hooks(api, other).create(other_route, events=["changelog.published"])
    theirs = publish_changelog(api, other)
    mine = publish_changelog(api, hooks.ws, 1)
    wait_for(lambda: mine_route.received and other_route.received)
    # Both events were recorded by then, so a misrouted one would be in the log already.
    assert [d["eventId"] for d in hooks.deliveries(mine_hook["id"])] == [mine_route.received[0].id[len("msg_"):]]
    assert [r.json()["data"]["id"] for r in mine_route.received] == [mine["id"]]
    assert [r.json()["data"]["id"] for r in other_route.received] == [theirs["id"]]
