"""The title-vector backfill worker: gives every post without a vector of the current model
(written while semantic search was off, before it existed, or by an older model) one, in
batches, logging its progress. Its state is the posts themselves, so it is safe to stop
and start again anywhere: it resumes with the posts still without one."""

from __future__ import annotations

import logging
import threading
import time

from bson import ObjectId

from posts import embeddings

log = logging.getLogger(__name__)
PROGRESS_EVERY = 5.0  # seconds between two progress lines
FIRST = ObjectId("0" * 24)


class Backfill:
    """What the worker does, one batch at a time (the repository's commands, the embedder's vectors)."""

    def __init__(self, repo, embedder: embeddings.LazyEmbedder):
        self.repo = repo
        self.embedder = embedder

    def remaining(self) -> int:
        """How many posts (of every workspace) have no title vector of the current model."""
        return self.repo.count_without_vector(embeddings.MODEL)

    def batch(self, after: ObjectId, limit: int) -> tuple[int, ObjectId | None]:
        """Give the next ``limit`` posts after ``after`` that have no title vector one; returns
        how many, and the last one's _id (where the next batch starts)."""
        posts = self.repo.without_vector(embeddings.MODEL, after, limit)
        if not posts:
            return 0, None
        vectors = self.embedder.titles([p["title"] for p in posts])
        self.repo.store_vectors(embeddings.MODEL, [(p, embeddings.to_stored(v)) for p, v in zip(posts, vectors)])
        return len(posts), posts[-1]["_id"]


def run(context, stop: threading.Event) -> None:
    service, config = context.service, context.config
    if service.embedder is None:
        log.info("semantic search is off (POSTS_SEMANTIC_SEARCH=false): no title vectors to backfill")
        return
    worker = Backfill(service.repo, service.embedder)
    # At start, every post without a vector of the current model (a new model re-embeds them
    # all); then, while idle, only the cheap question whether a post has none at all: posts
    # are written with a vector, or without one when the model was off or failing.
    remaining = worker.remaining()
    while not stop.is_set():
        if remaining:
            backfill(worker, remaining, config.backfill_batch, stop)
        stop.wait(config.backfill_idle)
        remaining = worker.remaining() if service.repo.any_without_any_vector() else 0


def backfill(worker: Backfill, remaining: int, batch: int, stop: threading.Event) -> int:
    """One pass over the posts without a vector, in _id order; returns how many it embedded."""
    log.info("backfill: %d posts have no title vector of %s; embedding them", remaining, embeddings.MODEL)
    done, after = 0, FIRST
    started = last_report = time.monotonic()
    while not stop.is_set():
        count, after = worker.batch(after, batch)
        if not count:
            break
        done += count
        if time.monotonic() - last_report >= PROGRESS_EVERY:
            last_report = time.monotonic()
            rate = done / (last_report - started)
            log.info("backfill: %d of %d posts embedded (%d%%), %.0f posts/s", done, remaining, 100 * done // max(remaining, done), rate)
    verb = "stopped" if stop.is_set() else "done"
    log.info("backfill: %s, %d posts embedded in %.1f s", verb, done, time.monotonic() - started)
    return done
