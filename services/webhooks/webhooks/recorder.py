"""From events to deliveries: the dispatcher's Kafka consumer.

Each poll's events are recorded together: one query for the enabled endpoints of the
workspaces concerned, one write for all their deliveries, and only then does the consumer
runner commit the offsets. Recording is idempotent by the unique (endpoint, event) pair, so
a replayed poll adds nothing. The deliveries are leased to this process and queued for its
sender; the consumer polls again once that queue is short (backpressure).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta

from pymongo.errors import PyMongoError

from common.consumer import ConsumerRunner
from common.ids import now
from webhooks import contract
from webhooks.service import subscribes
from webhooks.signing import payload

log = logging.getLogger(__name__)

BACKLOG_FACTOR = 8  # the recorder waits while more than this many times WEBHOOK_CONCURRENCY are queued


class Recorder:
    def __init__(self, context, sender, stop):
        self.repo = context.repo
        self.catalog = context.catalog
        self.sender = sender
        self.stop = stop

    def on_event(self, event: dict) -> None:
        self.on_events([event])

    def on_events(self, events: list[dict]) -> None:
        # Types outside the catalog are internal and never leave the platform; test pings
        # are made by the API for one endpoint, never taken from a topic.
        events = [e for e in events if e.get("type") in self.catalog and e["type"] != contract.WEBHOOK_TEST]
        if not events:
            return
        by_workspace = self.repo.enabled_in(sorted({e["workspace"] for e in events}))
        pairs = []
        for event in events:
            happened = datetime.fromisoformat(event["timestamp"])
            for endpoint in by_workspace.get(event["workspace"], []):
                if subscribes(endpoint, event["type"], happened):
                    pairs.append((event, endpoint))
        if not pairs:
            return
        # Each delivery is leased to this process for as long as the attempts queued ahead of
        # it should take; the sender attempts them (a replayed event adds nothing).
        ahead = self.sender.backlog()
        at = now()
        docs = []
        for i, (event, endpoint) in enumerate(pairs):
            body = payload(event["type"], event["timestamp"], event.get("data") or {})
            due = at + timedelta(seconds=self.sender.lease_for(ahead + i))
            docs.append(self.repo.new_delivery(endpoint, event["id"], body, due, self.sender.token))
        endpoints = {endpoint["_id"]: endpoint for _, endpoint in pairs}
        for delivery in self.repo.insert_deliveries(docs):
            self.sender.enqueue(delivery, endpoints[delivery["endpointId"]])
        # Backpressure: poll Kafka again only once the local queue is short, so leases stay
        # short and a busy dispatcher leaves the next events to the others in its group.
        self.sender.wait_below(BACKLOG_FACTOR * self.sender.capacity, self.stop)


class DispatchConsumer(ConsumerRunner):
    """The platform's consumer runner, recording a whole poll at once.

    If recording a poll fails for another reason than the database, the runner's own
    one-event-at-a-time path takes over, so a malformed event is retried and parked in the
    dead-letter topic alone.
    """

    def __init__(self, settings, db, recorder: Recorder, topics: list[str]):
        super().__init__(settings, db, contract.CONSUMER_GROUP, {topic: recorder.on_event for topic in topics})
        self.recorder = recorder

    def handle_records(self, records: list) -> None:
        decoded, events = [], []
        for record in records:
            try:
                event = json.loads(record.value)
                if not isinstance(event, dict) or not {"id", "type"} <= event.keys():
                    raise ValueError("not an event envelope")
            except (ValueError, TypeError):
                self.handle(record.topic, record.value)  # parks it
                continue
            decoded.append(record)
            events.append(event)
        try:
            self.recorder.on_events(events)
        except PyMongoError:
            raise  # the database is down: the runner retries the poll later
        except Exception:  # noqa: BLE001 - isolate the bad event instead of stalling the partition
            log.exception("webhook recorder: a poll of %d events failed; handling them one by one", len(events))
            for record in decoded:
                self.handle(record.topic, record.value)
