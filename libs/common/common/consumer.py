"""The consumer runner: a Kafka consumer group that hands each event to its handler.

Handlers are plain functions ``handler(event: dict) -> None`` keyed by topic; one made with
:func:`only` is handed only the event types it names, and the others cost nothing (no marker,
no database round trip: a topic's busiest events are often of no interest to most groups).
Handling is idempotent by event id (a marker per consumer group in MongoDB); offsets are committed
only after every message of a batch was handled; a message that keeps failing goes to
``<topic>.dlq`` so one poison message cannot stall a partition.

Only the first messages of a partition after it is assigned are looked up among the markers: a
partition is handled in order and each message marked after it, so what an earlier owner handled
before it stopped is a run of marked messages from the committed offset on, and once one message
is found unmarked, none after it was handled (one database round trip less per event and group;
docs/architecture.md, "Two layouts of the same processes").
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Callable, Mapping

from pymongo.errors import DuplicateKeyError, PyMongoError

from common.config import Settings
from common.errors import BadGateway, GatewayTimeout, Unavailable
from common.ids import now
from common.kafka import KafkaError, dlq, make_consumer, make_producer, publish
from common.retry import run_until_stopped

log = logging.getLogger(__name__)

Handler = Callable[[dict], None]
ATTEMPTS = 3
# How long a poll waits for records (it returns as soon as some arrive; the fetch itself waits at
# the broker, common.kafka). Each empty return costs a turn of the loop in Python: at 0.5 s the
# seven consumer groups of `make run`'s process spent half its CPU at rest in them. Kept under
# the local GRACEFUL_SECONDS (2): a stopping worker sees the stop and closes its consumer, leaving
# the group at once, so a restarted one joins without waiting out the session.
POLL_SECONDS = 1.5


def only(types, handler: Handler) -> Handler:
    """``handler``, handed only events of ``types`` (the runner passes over the others)."""

    def of_these(event: dict) -> None:
        handler(event)

    of_these.event_types = frozenset(types)
    return of_these

# What a handler may meet that passes: the database or a service it asks is down. The batch is
# handled again later (its offsets are not committed), never parked.
TRANSIENT = (PyMongoError, Unavailable, BadGateway, GatewayTimeout)


class ConsumerRunner:
    def __init__(self, settings: Settings, db, group: str, handlers: Mapping[str, Handler]):
        self.settings = settings
        self.group = group
        self.handlers = dict(handlers)
        self.processed = db["processed_events"]
        # Markers only need to outlive redelivery; real MongoDB expires them after a week.
        self.processed.create_index("at", expireAfterSeconds=7 * 86400)
        self._consumer = None
        self._dlq_producer = None
        self._assigned: set = set()
        # (topic, partition) pairs, since their assignment, past their last marked message.
        self._unmarked: set[tuple[str, int]] = set()

    def run(self, stop: threading.Event) -> None:
        # Uncommitted messages are delivered again after reconnecting; handling is idempotent.
        run_until_stopped(
            self._poll_once, stop, errors=(KafkaError, *TRANSIENT), what=f"consumer {self.group}", log=log,
            on_failure=self._close_clients,
        )
        self._close_clients()

    def _poll_once(self) -> None:
        if self._consumer is None:
            self._consumer = make_consumer(self.settings, self.group, sorted(self.handlers))
        batch = self._consumer.poll(timeout_ms=int(POLL_SECONDS * 1000))
        assigned = self._consumer.assignment()
        if assigned != self._assigned:  # a rebalance: partitions start again from their committed offsets
            self._assigned = set(assigned)
            self._unmarked.clear()
        if batch:
            self.handle_records([record for records in batch.values() for record in records])
            self._consumer.commit()

    def handle_records(self, records: list) -> None:
        """Handle one poll's records (Kafka ConsumerRecords) before their offsets are committed.
        Subclasses may handle them together (e.g. one database write per poll)."""
        for record in records:
            self.handle(record.topic, record.value, record.partition)

    def handle(self, topic: str, raw: bytes, partition: int | None = None) -> None:
        """Handle one message; with its ``partition``, the marker is looked up only until the
        partition's first unmarked message (without, always)."""
        try:
            event = json.loads(raw)
            event_id = event["id"]
        except (ValueError, TypeError, KeyError):
            self._park(topic, raw, "undecodable message")
            return
        handler = self.handlers[topic]
        if event.get("type") not in getattr(handler, "event_types", (event.get("type"),)):
            return  # not of the types this handler acts on: nothing to do, nothing to remember
        marker = f"{self.group}:{event_id}"
        if (topic, partition) not in self._unmarked:
            if self.processed.find_one({"_id": marker}, projection={"_id": 1}) is not None:
                return
            if partition is not None:
                self._unmarked.add((topic, partition))
        for attempt in range(1, ATTEMPTS + 1):
            try:
                handler(event)
                break
            except TRANSIENT:
                raise  # the database or a service is down: retry the whole batch later, do not park
            except Exception as ex:  # noqa: BLE001 - a handler bug must not stop the consumer
                log.exception("consumer %s: handler failed on %s (attempt %d)", self.group, event_id, attempt)
                if attempt == ATTEMPTS:
                    self._park(topic, raw, repr(ex))
        try:
            self.processed.insert_one({"_id": marker, "at": now()})
        except DuplicateKeyError:
            pass

    def _park(self, topic: str, raw: bytes, reason: str) -> None:
        log.error("consumer %s: parking a message of %s in %s: %s", self.group, topic, dlq(topic), reason)
        if self._dlq_producer is None:
            self._dlq_producer = self._open_producer()
        publish(self._dlq_producer, dlq(topic), {"group": self.group, "reason": reason, "raw": raw.decode(errors="replace")})
        self._dlq_producer.flush(timeout=10)

    def _open_producer(self):
        """The producer that parks messages: opened at the first poison message, kept until stop."""
        return make_producer(self.settings)

    def _close_clients(self) -> None:
        """Close the Kafka clients (after a failure, and on stop); they are opened again when needed."""
        self._assigned, self._unmarked = set(), set()  # a new consumer starts from the committed offsets
        if self._consumer is not None:
            _close(self._consumer.close, autocommit=False)
            self._consumer = None
        if self._dlq_producer is not None:
            _close(self._dlq_producer.close, timeout=1)
            self._dlq_producer = None


def _close(close, **options) -> None:
    try:
        close(**options)
    except Exception:  # noqa: BLE001 - closing a broken client must not mask the real error
        pass
