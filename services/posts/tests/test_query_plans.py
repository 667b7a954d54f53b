"""On real MongoDB every read the posts service sends is index-bounded: the plans (explain)
of each query use an index and no in-memory sort. The pages and roadmap columns explained are
the ``mongo`` read engine's own cursors (``MongoReads.queries``), for every documented list
shape, so the test proves what runs. Runs where MONGODB_URI names a real MongoDB (a replica
set); skipped on the local stand-in, which has no query planner to show."""

import os
import uuid

import pytest
from bson import ObjectId

from posts.reads.engines import MongoReads

from .helpers import STATUSES, shapes_of_lists, winning

pytestmark = pytest.mark.skipif(not os.environ.get("MONGODB_URI"), reason="needs a real MongoDB (set MONGODB_URI)")


@pytest.fixture(scope="module")
def repo(service_context):
    return service_context("posts").service.repo


def test_every_read_walks_an_index(repo):
    import random

    slug = f"plans-{uuid.uuid4().hex[:6]}"
    ids = [ObjectId() for _ in range(3)]
    engine = MongoReads(repo, 2**20)
    reads = {
        f"page {filters} {sort}": engine.queries(slug, filters, sort, limit, offset)
        for filters, sort, limit, offset in shapes_of_lists(random.Random(0))
    }
    reads.update({f"roadmap column {s}": c for s, c in engine.roadmap_queries(slug, STATUSES, None, 50).items()})
    reads.update({f"roadmap column {s} on a board": c for s, c in engine.roadmap_queries(slug, STATUSES, "b1", 50).items()})
    reads.update({
        "the change clocks": repo.clocks_cursor(slug),
        "catch-up by changedAt": repo.changed_since(slug, 0),
        "index build": repo.index_source(slug)[0],
        "a page's documents": repo.posts_cursor(ids),
        "a post": repo.posts.find({"_id": ids[0], "workspace": slug}),
        "the caller's votes": repo.votes.find({"userId": "u", "countsFor": {"$in": [str(i) for i in ids]}}),
        "comments in thread order": repo.comments.find({"postId": ids[0]}, sort=[("path", 1)], limit=100),
        "read model since": repo.workspace_views.find({"syncedAt": {"$gte": 0}}),
    })
    for name, cursor in reads.items():
        plan = winning(cursor)
        assert "COLLSCAN" not in plan, f"{name}: {plan}"
        assert "SORT" not in plan, f"{name} sorts in memory: {plan}"
