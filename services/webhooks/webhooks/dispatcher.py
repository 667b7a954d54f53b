"""The dispatcher worker: a Kafka consumer group over every topic the plugins publish, and
the sender that attempts the deliveries it records.

Per event, the recorder stores one delivery per subscribed, enabled endpoint *before* the
handler returns; the consumer runner commits Kafka offsets only after that, so a dispatcher
killed at any point loses nothing (a replayed event adds no delivery twice: the pair
(endpoint, event) is unique). Run as many dispatcher processes as needed: the consumer group
splits the partitions and the due-time records split the attempts.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime

from common.consumer import ConsumerRunner
from common.plugins import load_services
from common.workers import supervise
from webhooks import contract
from webhooks.sender import Sender

log = logging.getLogger(__name__)


def event_topics() -> list[str]:
    """Every topic a discovered plugin publishes (this service's own included)."""
    return sorted({topic for spec in load_services().values() for topic in spec.publishes})


class Recorder:
    """Turns one event into deliveries; leases as many as the sender has free slots for."""

    def __init__(self, context, sender: Sender):
        self.endpoints = context.endpoints
        self.store = context.deliveries
        self.lease = context.webhook_settings.lease
        self.sender = sender

    def on_event(self, event: dict) -> None:
        type_ = event.get("type")
        if type_ not in contract.EVENT_CATALOG or type_ == contract.WEBHOOK_TEST:
            return  # internal events never leave the platform
        happened = datetime.fromisoformat(event["timestamp"])
        endpoints = self.endpoints.subscribed(event["workspace"], type_, happened)
        if not endpoints:
            return
        slots = self.sender.reserve(len(endpoints))
        try:
            leased = self.store.record(event, endpoints, slots, self.sender.token, self.lease)
        except BaseException:
            self.sender.release(slots)
            raise
        by_id = {e["_id"]: e for e in endpoints}
        for delivery in leased:
            self.sender.submit(delivery, by_id[delivery["endpointId"]])
        self.sender.release(slots - len(leased))
        if len(endpoints) > slots:
            self.sender.wake.set()  # the rest is due now: claim it as soon as slots free up


def run_dispatcher(context, stop: threading.Event) -> None:
    topics = event_topics()
    sender = Sender(context)
    recorder = Recorder(context, sender)
    runner = ConsumerRunner(
        context.settings, context.store.db, contract.CONSUMER_GROUP, {topic: recorder.on_event for topic in topics}
    )
    consumer_stop = threading.Event()
    consumer = threading.Thread(
        target=supervise, args=("webhooks.dispatcher.consumer", runner.run, consumer_stop), name="consumer", daemon=True
    )
    consumer.start()
    log.info("webhook dispatcher %s consuming %s", sender.token, ", ".join(topics))
    try:
        sender.run(stop)
    finally:
        consumer_stop.set()
        consumer.join(timeout=10)
        sender.close()
