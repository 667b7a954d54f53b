"""A worker SIGKILLed in the middle of an import: after a restart its job is claimed again once
the lease ends and run from the start, and it ends with the counts of an uninterrupted run, and
the workspace holds each item once (an export of it counts them)."""

from __future__ import annotations

import json

import pytest

from testkit import create_workspace, wait_for

WORKER = "portability-worker"
POSTS, VOTERS, COMMENTS = 150, 4, 100


def document() -> dict:
    users = [{"id": f"u{n}", "name": f"User {n}", "email": f"user{n}@kill.test"} for n in range(VOTERS)]
    posts = [{"id": f"p{n}", "board": {"id": "b1"}, "status": "open", "title": f"Post {n}", "details": "",
              "author": {"id": f"u{n % VOTERS}"}, "created": "2024-01-01T00:00:00Z"} for n in range(POSTS)]
    votes = [{"id": f"v{p}-{u}", "post": {"id": f"p{p}"}, "voter": {"id": f"u{u}"}, "created": "2024-01-02T00:00:00Z"}
             for p in range(POSTS) for u in range(VOTERS) if (p + u) % 2 == 0]
    comments = [{"id": f"c{n}", "post": {"id": f"p{n % POSTS}"}, "author": {"id": "u0"}, "value": f"Comment {n}",
                 "created": "2024-01-03T00:00:00Z"} for n in range(COMMENTS)]
    return {"boards": [{"id": "b1", "name": "Ideas", "urlName": "ideas"}], "users": users, "posts": posts, "votes": votes,
            "comments": comments}


@pytest.mark.reliability
def test_an_import_killed_midway_ends_with_the_counts_of_an_uninterrupted_run(stack, api, admin_token):
    doc = document()
    expected = {"boards": 1, "statuses": 1, "tags": 0, "fields": 0, "people": VOTERS, "companies": 0, "posts": POSTS, "merges": 0,
                "votes": len(doc["votes"]), "comments": COMMENTS, "changelogs": 0, "settings": 0}
    ws = create_workspace(api, admin_token, name="Killed import")
    r = api.post(f"{ws.path}/imports", key=ws.key, params={"source": "canny"}, data=json.dumps(doc).encode(),
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 202, r.text
    path = f"{ws.path}/imports/{r.json()['id']}"

    def midway():
        job = api.get(path, key=ws.key).json()
        return job if job["status"] == "running" and 0 < job["progress"]["done"] and job["counts"]["posts"] > 0 else None

    before = wait_for(midway, timeout=60, interval=0.05, what="the import under way")
    stack.kill(WORKER)
    try:
        killed = api.get(path, key=ws.key).json()
        assert killed["status"] == "running" and killed["progress"]["done"] < killed["progress"]["total"], killed
    finally:
        stack.processes[WORKER].start()
    done = wait_for(lambda: (j := api.get(path, key=ws.key).json())["status"] in ("succeeded", "failed") and j, timeout=180,
                    what="the import to end after the restart")
    assert done["status"] == "succeeded" and done["errors"] == [], done
    assert done["counts"] == expected and done["progress"]["done"] == done["progress"]["total"]
    # Each item is there once: an export of the workspace counts what it holds.
    export = api.post(f"{ws.path}/exports", key=ws.key).json()
    ended = wait_for(lambda: (e := api.get(f"{ws.path}/exports/{export['id']}", key=ws.key).json())["status"] == "succeeded" and e,
                     timeout=60, what="the export")
    assert {k: ended["counts"][k] for k in ("posts", "votes", "comments", "boards")} == {
        "posts": POSTS, "votes": len(doc["votes"]), "comments": COMMENTS, "boards": 1}
    print(f"\nkilled at {before['progress']['done']} of {before['progress']['total']} items")
