"""The query index answers as the database would: random creates, votes, status and
moderation changes, merges and unmerges, then every sort and filter compared with a
straightforward query of the stored documents. In process, against the real local database."""

import itertools
import random

import pytest
from bson import ObjectId

from posts import contract
from posts.board import ListQuery
from posts.plugin import wire

from .helpers import BOARDS, STATUSES, WORDS, manager, new_workspace, user


@pytest.fixture(scope="module")
def seeded_slug(context):
    """A workspace of 120 posts moved about at random (votes, statuses, moderation, comments,
    merges); its slug."""
    slug = new_workspace(context, "idx")
    rng = random.Random(7)
    service = context.service
    ids = []
    for i in range(120):
        title = " ".join(rng.sample(WORDS, 2)) + f" idea {i}"
        ids.append(service.create(manager(slug), slug, {"boardSlug": rng.choice(BOARDS)["slug"], "title": title, "content": "x"})["id"])
    voters = [user(slug) for _ in range(15)]
    for _ in range(300):
        pid, action = rng.choice(ids), rng.random()
        try:
            if action < 0.55:
                context.votes.vote(rng.choice(voters), slug, pid)
            elif action < 0.65:
                context.votes.unvote(rng.choice(voters), slug, pid)
            elif action < 0.75:
                service.update(manager(slug), slug, pid, {"statusSlug": rng.choice(STATUSES)})
            elif action < 0.83:
                service.update(manager(slug), slug, pid, {"moderationState": rng.choice(contract.MODERATION_STATES)})
            elif action < 0.88:
                service.comment(rng.choice(voters), slug, pid, {"content": "me too"})
            elif action < 0.95:
                context.merges.merge(manager(slug), slug, pid, {"intoPostId": rng.choice(ids)})
            else:
                context.merges.unmerge(manager(slug), slug, pid)
        except Exception as ex:  # refused moves (merging a merged post, voting on one) are part of the game
            assert getattr(ex, "status", "")[:1] == "4", ex
    return slug


def straightforward(context, slug, query: ListQuery, as_manager: bool) -> list[str]:
    filters: dict = {"workspace": slug}
    if as_manager:
        filters["mergedInto"] = None
        if query.moderation:
            filters["moderationState"] = query.moderation
    else:
        filters["listed"] = True
    if query.board:
        filters["boardId"] = next(b["id"] for b in BOARDS if b["slug"] == query.board)
    if query.status:
        filters["statusSlug"] = query.status
    if query.q:
        filters["terms"] = {"$all": [f"w:{query.q}"]}
    found = context.store.db.posts.find(filters, sort=contract.SORTS[query.sort], skip=query.offset, limit=query.limit)
    return [str(d["_id"]) for d in found]


CASES = [
    ListQuery(sort=sort, board=board, status=status, q=q, offset=offset, limit=limit)
    for sort, board, status, q, (offset, limit) in itertools.product(
        contract.SORTS, [None, "board-1"], [None, "planned"], [None, "slack"], [(0, 20), (15, 10), (0, 100)]
    )
]


@pytest.mark.parametrize("as_manager", [False, True], ids=["public", "manager"])
def test_every_sort_and_filter_answers_as_the_database(context, seeded_slug, as_manager):
    # A second service over the same database: another API process, with an index of its own.
    other = wire(context.settings, context.service.repo, context.workspaces, context.config).board
    caller = manager(seeded_slug) if as_manager else user(seeded_slug)
    for query in CASES + [ListQuery(moderation=m) for m in contract.MODERATION_STATES if as_manager]:
        if query.sort in contract.TEAM_SORTS and not as_manager:
            continue  # refused to others (test_revenue.py)
        expected = straightforward(context, seeded_slug, query, as_manager)
        for board in (context.board, other):
            got = [p["id"] for p in board.list(caller, seeded_slug, query)["items"]]
            assert got == expected, query


def test_the_roadmap_answers_as_the_database(context, seeded_slug):
    columns = context.board.roadmap(user(seeded_slug), seeded_slug, None, 5)["columns"]
    for column in columns:
        status = column["status"]["slug"]
        expected = context.store.db.posts.find(
            {"workspace": seeded_slug, "listed": True, "statusSlug": status}, sort=contract.SORTS["top"], limit=5
        )
        assert [i["id"] for i in column["items"]] == [str(d["_id"]) for d in expected]


def test_a_write_through_one_process_is_read_at_once_through_another(context, seeded_slug):
    """Read your writes on any API process: the next read checks the change clocks."""
    other = wire(context.settings, context.service.repo, context.workspaces, context.config).board
    other.list(user(seeded_slug), seeded_slug, ListQuery(sort="top"))  # the other process has built its index
    created = context.service.create(manager(seeded_slug), seeded_slug, {"boardSlug": "board-0", "title": "Brand new", "content": "x"})
    assert other.list(user(seeded_slug), seeded_slug, ListQuery(sort="newest", limit=1))["items"][0]["id"] == created["id"]
    voters = [user(seeded_slug) for _ in range(40)]
    for voter in voters:
        context.votes.vote(voter, seeded_slug, created["id"])
    top = other.list(user(seeded_slug), seeded_slug, ListQuery(sort="top", limit=1))["items"][0]
    assert (top["id"], top["voteCount"]) == (created["id"], 40)
    assert other.search(user(seeded_slug), seeded_slug, "Brand new", None, 5)["items"][0]["id"] == created["id"]
    context.service.update(manager(seeded_slug), seeded_slug, created["id"], {"moderationState": "spam"})
    assert created["id"] not in [p["id"] for p in other.list(user(seeded_slug), seeded_slug, ListQuery(sort="top", limit=100))["items"]]


def test_a_rare_filter_on_a_deep_order_is_answered_from_its_sets(context, seeded_slug):
    rare = context.service.create(manager(seeded_slug), seeded_slug, {"boardSlug": "board-2", "title": "Oldest rare", "content": "x"})
    context.service.update(manager(seeded_slug), seeded_slug, rare["id"], {"statusSlug": "complete"})
    from posts.reads import index as query_index

    index = context.reads.cache.fresh(seeded_slug)
    saved = query_index.WALK_MIN, query_index.WALK_PER_ITEM
    query_index.WALK_MIN, query_index.WALK_PER_ITEM = 3, 1  # force the sparse path
    try:
        query = ListQuery(sort="oldest", board="board-2", status="complete", limit=100)
        got = [p["id"] for p in context.board.list(user(seeded_slug), seeded_slug, query)["items"]]
        assert got == straightforward(context, seeded_slug, query, False) and rare["id"] in got
    finally:
        query_index.WALK_MIN, query_index.WALK_PER_ITEM = saved
    assert index.size() >= 121
    assert ObjectId(rare["id"])
