"""The re-check worker: checks pending and broken domains with backoff until they are
verified (or fail at their deadline), and verified ones every DOMAINS_RECHECK_INTERVAL."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)


def run(context, stop: threading.Event) -> None:
    config, service = context.config, context.service
    with ThreadPoolExecutor(max_workers=config.check_concurrency, thread_name_prefix="dns-check") as pool:
        while not stop.is_set():
            claimed = service.claim_due(config.check_concurrency)
            if not claimed:
                stop.wait(config.worker_poll)
                continue
            for doc, outcome in zip(claimed, pool.map(_recheck(service), claimed)):
                if isinstance(outcome, Exception):
                    log.error("re-check of %s (%s) failed: %r", doc.get("domain"), doc["_id"], outcome)


def _recheck(service):
    def check(doc):
        try:
            return service.recheck(doc)
        except Exception as ex:  # noqa: BLE001 - one domain's failure must not stop the others; its claim expires
            return ex

    return check
