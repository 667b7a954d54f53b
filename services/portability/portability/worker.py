"""The export worker: runs waiting exports and imports one at a time, and jobs whose worker
died once their lease ends. Any number of these may run: a claim is one conditional write."""

from __future__ import annotations

import logging
import threading

from common.consumer import TRANSIENT
from common.retry import run_until_stopped

log = logging.getLogger(__name__)


def run(context, stop: threading.Event) -> None:
    def step() -> None:
        # An export and an import waiting: one of each per turn, so neither waits for all of the other.
        exported = context.exporter.run_next()
        imported = context.importer.run_next()
        if not (exported or imported):
            stop.wait(context.config.poll_seconds)

    run_until_stopped(step, stop, errors=TRANSIENT, what="export worker", log=log)
