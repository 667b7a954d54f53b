"""The title-vector backfill (posts.backfill): it embeds the posts whose vector is missing or
of another model, in batches in _id order, and leaves the others alone. In process, against the
real local database and the real sentence model (test_similar_posts.py has its resumption and
a title edited while it runs)."""

import dataclasses
import threading

from bson import ObjectId

from posts import backfill, embeddings
from posts.plugin import Context, wire
from testkit import wait_for

from .helpers import manager

TITLES = ["Export all posts to a CSV file", "Slack notifications show up twice", "Login with Google accounts",
          "Invoices should include our VAT number", "Keyboard shortcuts for the editor"]


def create(service, slug, title) -> ObjectId:
    return ObjectId(service.create(manager(slug), slug, {"boardSlug": "features", "title": title, "content": ""})["id"])


def lexical(context) -> Context:
    """The service as it runs with semantic search off: its posts get no title vector."""
    return wire(context.settings, context.service.repo, context.workspaces, context.config, embedder=None)


def stored(context, oid: ObjectId) -> dict:
    return context.store.db.posts.find_one({"_id": oid})


def has_title_vector(context, oid: ObjectId) -> bool:
    doc = stored(context, oid)
    [expected] = context.service.embedder.titles([doc["title"]])
    return doc["embeddingModel"] == embeddings.MODEL and float(embeddings.from_stored(doc["embedding"]) @ expected) > 0.99


def test_a_vector_of_another_model_is_stale_and_replaced(context, slug):
    worker = backfill.Backfill(context.service.repo, context.service.embedder)
    stale, current = create(context.service, slug, TITLES[0]), create(context.service, slug, TITLES[1])
    before = stored(context, current)
    # As if the first vector had been made by a model the service no longer runs.
    context.store.db.posts.update_one({"_id": stale}, {"$set": {"embeddingModel": "an-older-model", "embedding": b"\0" * 768}})
    missing = create(lexical(context).service, slug, TITLES[2])
    remaining = worker.remaining()
    assert remaining >= 2

    assert backfill.backfill(worker, remaining, 64, threading.Event()) == remaining
    assert worker.remaining() == 0
    assert has_title_vector(context, stale) and has_title_vector(context, missing)
    after = stored(context, current)
    assert (after["embedding"], after["changedAt"]) == (before["embedding"], before["changedAt"]), "a current vector is left alone"


def test_batches_walk_the_posts_in_id_order_and_skip_those_with_a_vector(context, slug):
    worker = backfill.Backfill(context.service.repo, context.service.embedder)
    start = ObjectId()  # before every post of this test: the other tests' posts are not in its batches
    without = [create(lexical(context).service, slug, title) for title in TITLES[:3]]
    embedded = create(context.service, slug, "Dark mode")
    without += [create(lexical(context).service, slug, title) for title in TITLES[3:]]

    assert worker.batch(start, 2) == (2, without[1])
    assert not has_title_vector(context, without[2])
    assert worker.batch(without[1], 2) == (2, without[3])  # the post with a vector is not in it
    assert worker.batch(without[3], 2) == (1, without[4])
    assert worker.batch(without[4], 2) == (0, None)
    assert all(has_title_vector(context, oid) for oid in without)
    # Each stored vector stamps its post (changedAt), so the query indexes take it in.
    assert all(stored(context, oid)["changedAt"] > stored(context, embedded)["changedAt"] for oid in without[:3])


def test_the_worker_embeds_what_is_missing_then_waits_for_more(context, slug):
    small = dataclasses.replace(context.config, backfill_batch=2, backfill_idle=0.05)
    worker_context = dataclasses.replace(context, config=small)
    stop = threading.Event()
    thread = threading.Thread(target=backfill.run, args=(worker_context, stop), daemon=True)
    thread.start()
    try:
        first = [create(lexical(context).service, slug, title) for title in TITLES[:3]]
        wait_for(lambda: all(has_title_vector(context, oid) for oid in first), what="the first posts embedded")
        later = create(lexical(context).service, slug, TITLES[3])  # written while the worker idles
        wait_for(lambda: has_title_vector(context, later), what="a post written later embedded")
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive(), "the worker stops when asked"


def test_with_semantic_search_off_the_worker_has_nothing_to_do(context, slug):
    missing = create(lexical(context).service, slug, TITLES[0])
    off = lexical(context)
    thread = threading.Thread(target=backfill.run, args=(off, threading.Event()), daemon=True)  # never stopped
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "it returns at once instead of polling"
    assert stored(context, missing)["embeddingModel"] is None


def test_while_idle_the_worker_asks_only_whether_a_post_has_no_vector_at_all(context, slug):
    """The idle check is one index lookup (every post without a vector has embeddingModel
    null); the count of posts without a vector of the current model runs at start only."""
    worker = backfill.Backfill(context.service.repo, context.service.embedder)
    context.board.backfill_last_comments()  # its marker, in the posts collection, is no post
    create(lexical(context).service, slug, TITLES[4])
    assert context.service.repo.any_without_any_vector()
    backfill.backfill(worker, worker.remaining(), 64, threading.Event())
    assert context.service.repo.last_comments_backfilled()
    assert not context.service.repo.any_without_any_vector()
