"""The outbox relay: publishes a service's outbox to Kafka, oldest first.

At-least-once: an event is deleted from the outbox only after Kafka acknowledged it, so
a crash between the two re-sends it and consumers drop the duplicate by event id. One
relay per service is active at a time (a lease in MongoDB), so extra replicas are
hot standbys and per-workspace order is kept.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time

from pymongo.errors import DuplicateKeyError, PyMongoError

from common.config import Settings
from common.db import ChangeWaiter
from common.events import OUTBOX
from common.kafka import KafkaError, make_producer, publish
from common.retry import run_until_stopped

log = logging.getLogger(__name__)

LEASE_SECONDS = 10.0
# Longest an idle relay waits on its change stream before it renews its lease when due: it wakes
# at once for a new event.
WAIT_SECONDS = 5.0
# An idle relay reads the outbox only when its stream says something was inserted; at least this
# often all the same (a safety net: a wait that ran out on a working stream means nothing came).
LOOK_SECONDS = 60.0


class OutboxRelay:
    def __init__(self, settings: Settings, db, name: str, batch: int = 200, idle_seconds: float = 0.05):
        self.settings = settings
        self.outbox = db[OUTBOX]
        self.outbox.create_index([("at", 1), ("_id", 1)])
        self.locks = db["locks"]
        self.name = f"outbox-relay:{name}"
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self)}"
        self.batch = batch
        self.idle_seconds = idle_seconds
        self._lease_until = 0.0
        self._producer = None
        self._inserts = ChangeWaiter(self.outbox, WAIT_SECONDS, [{"$match": {"operationType": "insert"}}], self.name)
        self._published: set = set()  # ids of the last batch: their insert events wake nobody
        self._changed = True  # something may be in the outbox that the last read did not see
        self._last_read = 0.0

    def run(self, stop: threading.Event) -> None:
        # Kafka or MongoDB down: nothing is lost, the events stay in the outbox.
        run_until_stopped(
            lambda: self._step(stop), stop, errors=(KafkaError, PyMongoError), what=f"outbox relay {self.name}", log=log,
            on_failure=self._close_clients,
        )
        self._close_clients()

    def _step(self, stop: threading.Event) -> None:
        if not self._hold_lease():
            self._inserts.close()  # a standby watches nothing
            self._changed = True  # when it holds the lease, it reads first
            stop.wait(LEASE_SECONDS / 3)
            return
        if self._changed or time.monotonic() - self._last_read >= LOOK_SECONDS:
            self._inserts.arm()  # before the read: no event written after it is missed
            self._last_read = time.monotonic()
            # A batch short of full emptied the outbox as the read saw it: what came after the
            # read wakes the wait, so no second read is needed to find it empty.
            if self.publish_batch() == self.batch:
                return
        # Not armed again after a quiet wait: what comes now is kept for the next wait.
        self._changed = self._inserts.wait(stop, self.idle_seconds, seen=lambda change: change["documentKey"]["_id"] in self._published)

    def publish_batch(self) -> int:
        docs = list(self.outbox.find({}, sort=[("at", 1), ("_id", 1)], limit=self.batch))
        if not docs:
            return 0
        if self._producer is None:
            self._producer = make_producer(self.settings)
        futures = [publish(self._producer, d["topic"], d["event"], key=d["key"]) for d in docs]
        self._producer.flush(timeout=15)
        for future in futures:
            future.get(timeout=0)  # raises the send's KafkaError, if any
        ids = [d["_id"] for d in docs]
        self.outbox.delete_many({"_id": {"$in": ids}})
        self._published = set(ids)
        return len(docs)

    def _hold_lease(self) -> bool:
        now = time.time()
        if now < self._lease_until - LEASE_SECONDS / 2:
            return True
        try:
            self.locks.find_one_and_update(
                {"_id": self.name, "$or": [{"owner": self.owner}, {"until": {"$lt": now}}]},
                {"$set": {"owner": self.owner, "until": now + LEASE_SECONDS}},
                upsert=True,
            )
        except DuplicateKeyError:
            return False  # another relay holds the lease
        self._lease_until = now + LEASE_SECONDS
        return True

    def _close_clients(self) -> None:
        self._inserts.close()
        self._changed = True  # the stream is gone: read before trusting a quiet wait again
        if self._producer is not None:
            try:
                self._producer.close(timeout=1)
            except Exception:  # noqa: BLE001 - closing a broken client must not mask the real error
                pass
            self._producer = None
