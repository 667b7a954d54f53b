"""Kafka clients with the settings this platform uses, and topic creation.

The broker settings below are tuned for real Apache Kafka and also work on the local
Tansu stand-in (its measured differences: docs/architecture.md, "The local stand-ins").
"""

from __future__ import annotations

import json
import logging
import warnings

with warnings.catch_warnings():
    # kafka-python 3.0 emits a DeprecationWarning on import; it is not ours to fix.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError, TopicAlreadyExistsError

from common.config import Settings

log = logging.getLogger(__name__)

__all__ = ["KafkaError", "make_producer", "publish", "make_consumer", "create_topics", "dlq"]


def dlq(topic: str) -> str:
    """Where a consumer parks messages it cannot handle."""
    return f"{topic}.dlq"


def make_producer(settings: Settings) -> KafkaProducer:
    return KafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        acks="all",
        linger_ms=5,
        retries=5,
        max_block_ms=5000,
        request_timeout_ms=10000,
    )


def publish(producer: KafkaProducer, topic: str, value: dict, key: str | None = None):
    """Send ``value`` as compact JSON; return the send's future."""
    return producer.send(topic, key=key.encode() if key else None, value=json.dumps(value, separators=(",", ":")).encode())


def make_consumer(settings: Settings, group: str, topics: list[str]) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,  # offsets are committed only after handling succeeded
        auto_offset_reset="earliest",
        # NOTE: Tansu (the local stand-in) makes a join take half the session timeout;
        # these values keep rebalances short there and are sane for Apache Kafka too.
        session_timeout_ms=6000,
        heartbeat_interval_ms=2000,
        # A fetch waits at the broker for records up to this long; both Kafka and the stand-in
        # answer as soon as one arrives (measured), so a long wait costs no latency and keeps an
        # idle consumer from asking again and again: each empty answer costs the client a fetch
        # cycle in Python, most of an idle process's CPU at 1 s (docs/benchmarks.md). Not longer:
        # a partition left out of the fetch in flight (its last records not yet handed out)
        # waits for that fetch to end (15 s failed tests whose events must follow in seconds).
        fetch_max_wait_ms=5000,
        max_poll_records=200,
    )
    consumer.subscribe(topics)
    return consumer


def create_topics(settings: Settings, topics: list[str]) -> list[str]:
    """Create the missing ones among ``topics``; return those created.

    Topics are created explicitly (Tansu would auto-create them with 4 partitions,
    real clusters often forbid auto-creation).
    """
    admin = KafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap_servers, request_timeout_ms=10000)
    try:
        existing = set(admin.list_topics())
        wanted = [t for t in dict.fromkeys(topics) if t not in existing]
        if wanted:
            try:
                admin.create_topics(
                    [NewTopic(t, num_partitions=settings.kafka_partitions, replication_factor=1) for t in wanted]
                )
            except TopicAlreadyExistsError:
                pass
        return wanted
    finally:
        admin.close()
