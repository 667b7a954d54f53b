"""The posts repository (posts.repository): a unit of work's change and its event commit
together or not at all, with and without the server's client bulkWrite; each post write moves
its post's change clock and stamps the post; updates that expect values; catch-ups by stamp; the page cursors of
the ``mongo`` read engine; and lookups scoped to their workspace. In process, against the real
local database."""

import time

import pytest
from bson import ObjectId
from pymongo.errors import DuplicateKeyError

from common import auth
from common.ids import now
from posts import contract, shapes, text
from posts.reads import Filters
from posts.repository import CATCH_UP_OVERLAP_NS, CLOCKS, WITHOUT_TERMS, clock_id, clock_ids
from posts.service import new_post

from .helpers import manager, new_workspace, user


@pytest.fixture(params=[True, False], ids=["bulk-write", "one-command-each"])
def repo(context, request):
    """The repository, on a server with client bulkWrite and on one without (MongoDB before 8)."""
    store = context.store
    learnt = store.bulk_supported
    store.bulk_supported = None if request.param else False
    yield context.service.repo
    store.bulk_supported = learnt


def create(context, slug, title="A post", board="features") -> ObjectId:
    return ObjectId(context.service.create(manager(slug), slug, {"boardSlug": board, "title": title, "content": "x"})["id"])


def stored(context, oid: ObjectId) -> dict:
    return context.store.db.posts.find_one({"_id": oid})


def the_clock_of(slug: str, oid: ObjectId) -> str:
    return clock_id(slug, int(str(oid), 16) % CLOCKS)


def test_a_post_its_event_and_its_clock_commit_together_or_not_at_all(context, slug, repo):
    doc = new_post(slug, "b1", "Atomic", "", "open", manager(slug))
    ws = context.workspaces.get(slug)
    created = {"post": shapes.post_event(doc, ws), "actor": auth.actor(manager(slug))}

    def add_post(tx):
        tx.triage_settings(slug)  # read first, as creating a post does: the writes then go in one bulkWrite
        tx.add(*tx.insert_post(doc), tx.event(slug, contract.POST_CREATED, created))

    repo.unit_of_work(add_post)
    clocks, events = repo.clocks(slug), repo.outbox.collection.count_documents({"key": slug})
    assert sum(clocks.values()) == 1 and events == 1

    with pytest.raises(DuplicateKeyError):  # the same post again: its insert fails...
        repo.unit_of_work(add_post)
    # ...and the clock's move and the event, written in the same transaction, are undone with it.
    assert repo.clocks(slug) == clocks
    assert repo.outbox.collection.count_documents({"key": slug}) == events


def test_writes_of_one_unit_of_work_report_what_each_touched(context, slug, repo):
    oid = create(context, slug, "Counted")
    voter = f"sso:{ObjectId()}"

    def work(tx):
        post = tx.find_post(slug, oid)  # read first: the writes then go in one bulkWrite
        tx.add(tx.insert_vote(workspace=slug, postId=oid, userId=voter, countsFor=str(oid), createdAt=now()),
               *tx.count_vote(post, 1, 0, {}),
               tx.count_vote({**post, "_id": ObjectId()}, 1, 0, {})[0],  # no such post
               *tx.withdraw_vote(voter, str(oid), []))
        return tx.flush()

    # An insert counts 0; an update the documents it matched; a delete those it deleted.
    assert repo.unit_of_work(work) == [0, 1, 1, 0, 1]
    assert stored(context, oid)["voteCount"] == 1


def test_each_post_write_moves_its_posts_clock_of_its_workspace_only(context, slug, repo):
    oid = create(context, slug)
    other = new_workspace(context, "clocks")
    before = repo.clocks(slug)
    assert set(before) <= set(clock_ids(slug))

    context.votes.vote(user(slug), slug, str(oid))
    after = repo.clocks(slug)
    moved = {c for c in set(before) | set(after) if after.get(c, 0) != before.get(c, 0)}
    assert moved == {the_clock_of(slug, oid)} and after[the_clock_of(slug, oid)] == before[the_clock_of(slug, oid)] + 1

    create(context, other, board="board-0")
    assert repo.clocks(slug) == after, "another workspace's writes move its own clocks"


def test_an_update_that_expects_values_changes_nothing_once_they_changed(context, slug, repo):
    """A rescore's write of a post applies only while the post is as the rescore read it."""
    oid = create(context, slug, "Original")
    stamp = stored(context, oid)["changedAt"]

    def conform(score: float, as_read: int) -> int:
        def work(tx):
            tx.find_post(slug, oid)  # read first, as a rescore does
            tx.add(*tx.conform_posts(slug, [(oid, {"score": score}, as_read)]))
            return tx.flush()[0]

        return repo.unit_of_work(work)

    assert conform(41.0, stamp - 1) == 0, "changed since it was read"
    assert stored(context, oid)["score"] != 41.0
    assert conform(42.0, stamp) == 1
    assert stored(context, oid)["score"] == 42.0
    assert stored(context, oid)["changedAt"] > stamp, "stamped for the query indexes"


def test_a_catch_up_reads_the_posts_changed_since_with_an_overlap(context, slug, repo):
    old, recent = create(context, slug, "Old"), create(context, slug, "Recent")
    minute_ago = time.time_ns() - 60 * 10**9
    context.store.db.posts.update_one({"_id": old}, {"$set": {"changedAt": minute_ago}})

    seen = {d["_id"] for d in repo.changed_since(slug, time.time_ns() - 30 * 10**9)}
    assert recent in seen and old not in seen
    # A transaction stamps before it commits: a change stamped a moment before the newest one
    # seen may commit after it, so the catch-up rereads that moment.
    assert recent in {d["_id"] for d in repo.changed_since(slug, stored(context, recent)["changedAt"] + CATCH_UP_OVERLAP_NS // 2)}
    assert {d["_id"] for d in repo.changed_since(slug, time.time_ns() + 2 * CATCH_UP_OVERLAP_NS)} == set()


def ids(cursor) -> list[ObjectId]:
    return [d["_id"] for d in cursor]


def test_a_page_cursor_shows_what_its_caller_may_see_in_sort_order(context, repo):
    slug = new_workspace(context, "pages")
    p1 = create(context, slug, "Slack export", board="board-0")
    p2 = create(context, slug, "Dark mode", board="board-1")
    p3 = create(context, slug, "Slack threads", board="board-1")
    spam = create(context, slug, "Cheap watches", board="board-0")
    merged = create(context, slug, "Night mode", board="board-1")
    service = context.service
    for voter in (user(slug), user(slug)):
        context.votes.vote(voter, slug, str(p2))
    context.votes.vote(user(slug), slug, str(p3))
    service.update(manager(slug), slug, str(p3), {"statusSlug": "planned"})
    service.update(manager(slug), slug, str(spam), {"moderationState": "spam"})
    context.merges.merge(manager(slug), slug, str(merged), {"intoPostId": str(p2)})
    everyone, managers = Filters(), Filters(manager=True)

    assert ids(repo.page_cursor(slug, everyone, "newest", 0, 20)) == [p3, p2, p1]
    assert ids(repo.page_cursor(slug, everyone, "oldest", 0, 20)) == [p1, p2, p3]
    assert ids(repo.page_cursor(slug, everyone, "top", 0, 20)) == [p2, p3, p1]
    assert ids(repo.page_cursor(slug, everyone, "top", 1, 1)) == [p3]
    assert ids(repo.page_cursor(slug, managers, "newest", 0, 20)) == [spam, p3, p2, p1], "all but merged posts"
    assert ids(repo.page_cursor(slug, Filters(manager=True, moderation="spam"), "newest", 0, 20)) == [spam]
    assert ids(repo.page_cursor(slug, Filters(board="b1"), "newest", 0, 20)) == [p3, p2]
    assert ids(repo.page_cursor(slug, Filters(status="planned"), "newest", 0, 20)) == [p3]
    assert ids(repo.page_cursor(slug, Filters(words=tuple(text.word_terms("slack"))), "newest", 0, 20)) == [p3, p1]

    # Equal votes: the newer post first (the sort's _id tie-break), on every page alike.
    tied = [create(context, slug, f"Tied {i}", board="board-2") for i in range(3)]
    assert ids(repo.page_cursor(slug, Filters(board="b2"), "top", 0, 2)) + ids(repo.page_cursor(slug, Filters(board="b2"), "top", 2, 2)) == tied[::-1]

    # A list leaves the search features out; a roadmap column reads only what it shows.
    page = list(repo.page_cursor(slug, everyone, "newest", 0, 20))
    assert all(not set(doc) & set(WITHOUT_TERMS) for doc in page)
    assert {key for doc in repo.page_cursor(slug, everyone, "top", 0, 20, roadmap=True) for key in doc} == {"_id", "title", "voteCount", "tags", "eta"}


def test_lookups_of_ids_are_scoped_to_their_workspace(context, slug, repo):
    mine = create(context, slug)
    theirs = create(context, new_workspace(context, "foreign"), board="board-0")
    assert repo.existing_ids(slug, [mine, theirs, ObjectId()]) == {str(mine)}
    assert repo.find_post(slug, theirs) is None and repo.find_post(slug, mine)["_id"] == mine
