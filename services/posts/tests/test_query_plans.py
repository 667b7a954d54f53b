"""On real MongoDB every read the posts service sends is index-bounded: the plans (explain)
of each query shape use an index and no in-memory sort. Runs where MONGODB_URI names a real
MongoDB (a replica set); skipped on the local stand-in, which has no query planner to show."""

import os
import uuid

import pytest
from bson import ObjectId

from posts.repository import INDEXED, clock_ids

pytestmark = pytest.mark.skipif(not os.environ.get("MONGODB_URI"), reason="needs a real MongoDB (set MONGODB_URI)")


def stages(plan: dict) -> set[str]:
    found = {plan.get("stage", "")}
    for key in ("inputStage", "queryPlan"):
        if isinstance(plan.get(key), dict):
            found |= stages(plan[key])
    for child in plan.get("inputStages", []):
        found |= stages(child)
    return found


def winning(cursor) -> set[str]:
    explained = cursor.explain()
    planner = explained.get("queryPlanner", explained)
    return stages(planner["winningPlan"])


@pytest.fixture(scope="module")
def repo(service_context):
    return service_context("posts").service.repo


def test_every_read_walks_an_index(repo):
    slug = f"plans-{uuid.uuid4().hex[:6]}"
    ids = [ObjectId() for _ in range(3)]
    reads = {
        "page and clocks by _id": repo.posts.find({"_id": {"$in": [*ids, *clock_ids(slug)]}}),
        "catch-up by changedAt": repo.posts.find({"workspace": slug, "changedAt": {"$gt": 0}}, projection=INDEXED),
        "index build": repo.posts.find({"workspace": slug}, projection=INDEXED),
        "a post": repo.posts.find({"_id": ids[0], "workspace": slug}),
        "the caller's votes": repo.votes.find({"userId": "u", "countsFor": {"$in": [str(i) for i in ids]}}),
        "comments in thread order": repo.comments.find({"postId": ids[0]}, sort=[("path", 1)], limit=100),
        "read model since": repo.workspace_views.find({"syncedAt": {"$gte": 0}}),
    }
    for name, cursor in reads.items():
        plan = winning(cursor)
        assert "COLLSCAN" not in plan, f"{name}: {plan}"
        assert "SORT" not in plan, f"{name} sorts in memory: {plan}"
