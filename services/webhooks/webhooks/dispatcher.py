"""The dispatcher worker: a Kafka consumer group over every topic the plugins publish, and
the sender that attempts the deliveries it records.

Deliveries are stored *before* the consumer runner commits the offsets of their events, so
a dispatcher killed at any point loses nothing. Run as many dispatcher processes as needed:
the consumer group splits the partitions, and the due-time records split the attempts.
"""

from __future__ import annotations

import logging
import threading

from common.workers import supervise
from webhooks.recorder import DispatchConsumer, Recorder
from webhooks.sender import Sender

log = logging.getLogger(__name__)


def run_dispatcher(context, stop: threading.Event) -> None:
    # Every topic a discovered plugin publishes events on (this service's own included).
    topics = sorted({topic for topic in context.catalog.values() if topic})
    sender = Sender(context)
    consumer_stop = threading.Event()
    runner = DispatchConsumer(context.settings, context.store.db, Recorder(context, sender, consumer_stop), topics)
    consumer = threading.Thread(
        target=supervise, args=("webhooks.dispatcher.consumer", runner.run, consumer_stop), name="consumer", daemon=True
    )
    consumer.start()
    log.info("webhook dispatcher %s consuming %s", sender.token, ", ".join(topics))
    try:
        sender.run(stop)
    finally:
        # The consumer stops first: it hands work to the sender, which then drains.
        consumer_stop.set()
        consumer.join(timeout=10)
        sender.close()
