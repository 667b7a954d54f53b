"""Posts events caused through the gateway reach the receiver, signed.

Written against the posts service's public routes; skipped while no posts service is discovered.
"""

from __future__ import annotations

import json

import pytest

from common.plugins import load_services
from testkit import wait_for

pytestmark = pytest.mark.skipif("posts" not in load_services(), reason="the posts service is not installed")

POSTS_EVENTS = [
    "post.created",
    "post.updated",
    "post.status_changed",
    "post.merged",
    "post.unmerged",
    "comment.created",
    "vote.created",
    "vote.deleted",
]


def mentions(received, post_id: str) -> bool:
    return post_id in json.dumps(received.json()["data"])


def test_posts_votes_comments_status_and_merge_are_delivered(hooks, receiver, api, workspace):
    route = receiver.route()
    hooks.create(route, events=POSTS_EVENTS)
    workspace.board("features", "Feature requests")
    user = workspace.user_token("voter-1")

    def create_post(title: str) -> dict:
        r = api.post(f"{workspace.path}/posts", user=user, json={"boardSlug": "features", "title": title, "content": "Please."})
        assert r.status_code == 201, r.text
        return r.json()

    first, second = create_post("Dark mode"), create_post("Add a dark theme")
    posts = f"{workspace.path}/posts"
    assert api.post(f"{posts}/{first['id']}/vote", user=user).status_code in (200, 201)
    assert api.delete(f"{posts}/{first['id']}/vote", user=user).status_code == 200
    r = api.post(f"{posts}/{first['id']}/comments", user=user, json={"content": "Yes **please**"})
    assert r.status_code == 201, r.text
    r = api.patch(f"{posts}/{first['id']}", key=workspace.key, json={"statusSlug": "planned"})
    assert r.status_code == 200, r.text
    r = api.post(f"{posts}/{second['id']}/merge", key=workspace.key, json={"intoPostId": first["id"]})
    assert r.status_code == 200, r.text
    r = api.post(f"{posts}/{second['id']}/unmerge", key=workspace.key)
    assert r.status_code == 200, r.text

    expected = {
        ("post.created", first["id"]),
        ("post.created", second["id"]),
        ("vote.created", first["id"]),
        ("vote.deleted", first["id"]),
        ("comment.created", first["id"]),
        ("post.status_changed", first["id"]),
        ("post.merged", second["id"]),
        ("post.unmerged", second["id"]),
    }

    def seen():
        return {(t, p) for t, p in expected for r in route.of_type(t) if mentions(r, p)}

    wait_for(lambda: seen() == expected, timeout=30, what=f"events {sorted(expected)}")
    assert all(r.verified_with == route.secrets for r in route.received)
    status_changed = route.of_type("post.status_changed")[0].json()
    assert "planned" in json.dumps(status_changed["data"])
    key = api.get("/api-key", key=workspace.key).json()
    assert status_changed["data"]["actor"] == {"id": f"key:{key['id']}", "name": key["name"]}  # who changed it
    # Every event reaches the endpoint once (no duplicate webhook-ids in normal operation).
    ids = [r.id for r in route.received]
    assert len(ids) == len(set(ids))


@pytest.mark.skipif("people" not in load_services(), reason="the people service is not installed")
def test_a_signed_in_member_is_named_in_the_payload(hooks, receiver, api, workspace):
    """A team member signed in with a session (here by invitation) changes a status: the
    delivered event names that person, as the audit log and the page do."""
    route = receiver.route()
    hooks.create(route, events=["post.status_changed"])
    workspace.board("features", "Feature requests")
    invitation = api.post(f"{workspace.path}/members", key=workspace.admin_token, json={"email": "grace@example.com", "role": "manager"})
    token = invitation.json()["link"].split("token=")[1]
    session = api.post(f"{workspace.path}/invitations/accept", json={"token": token}).json()
    api.patch("/me", key=session["token"], json={"name": "Grace Hopper"})
    post = api.post(f"{workspace.path}/posts", key=workspace.key,
                    json={"boardSlug": "features", "title": "Named", "content": "Please."}).json()
    r = api.patch(f"{workspace.path}/posts/{post['id']}", key=session["token"], json={"statusSlug": "planned"})
    assert r.status_code == 200, r.text
    wait_for(lambda: route.of_type("post.status_changed"), timeout=30, what="the status change")
    actor = route.of_type("post.status_changed")[0].json()["data"]["actor"]
    assert actor == {"id": session["user"]["id"], "name": "Grace Hopper"}
