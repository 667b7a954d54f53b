"""The export worker: runs waiting exports and imports one at a time, and jobs whose worker
died once their lease ends. Any number of these may run: a claim is one conditional write."""

from __future__ import annotations

import logging
import threading

from common.consumer import TRANSIENT
from common.retry import run_until_stopped

log = logging.getLogger(__name__)

# A job queued by this process wakes its worker at once (make run serves the API and runs the
# worker in one process); a worker of another process finds it at its next look
# (PORTABILITY_POLL_SECONDS), so an idle worker asks the database little.
JOB_QUEUED = threading.Event()


def run(context, stop: threading.Event) -> None:
    def step() -> None:
        # An export and an import waiting: one of each per turn, so neither waits for all of the other.
        exported = context.exporter.run_next()
        imported = context.importer.run_next()
        if not (exported or imported):
            JOB_QUEUED.wait(context.config.poll_seconds)
            JOB_QUEUED.clear()

    run_until_stopped(step, stop, errors=TRANSIENT, what="export worker", log=log)
