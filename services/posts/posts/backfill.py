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


def run(context, stop: threading.Event) -> None:
    service, config = context.service, context.config
    if service.embedder is None:
        log.info("semantic search is off (POSTS_SEMANTIC_SEARCH=false): no title vectors to backfill")
        return
    while not stop.is_set():
        remaining = service.posts_without_vector()
        if remaining:
            backfill(service, remaining, config.backfill_batch, stop)
        stop.wait(config.backfill_idle)


def backfill(service, remaining: int, batch: int, stop: threading.Event) -> int:
    """One pass over the posts without a vector, in _id order; returns how many it embedded."""
    log.info("backfill: %d posts have no title vector of %s; embedding them", remaining, embeddings.MODEL)
    done, after = 0, FIRST
    started = last_report = time.monotonic()
    while not stop.is_set():
        count, after = service.backfill_vectors(after, batch)
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
