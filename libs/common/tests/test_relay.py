"""The outbox relay against real local MongoDB- and Kafka-protocol servers: an idle relay reads
its outbox only when its change stream says something was inserted, and publishes at once what is."""

import json
import threading
import uuid

from kafka import KafkaConsumer, TopicPartition
from pymongo import MongoClient

from common import relay
from common.events import Outbox
from common.kafka import create_topics
from testkit import wait_for

from .commands import Commands


def test_an_idle_relay_reads_its_outbox_only_after_an_insert(servers, monkeypatch):
    monkeypatch.setattr(relay, "WAIT_SECONDS", 0.5)  # eight quiet waits in the four seconds below
    topic = f"test-relay-{uuid.uuid4().hex[:8]}"
    create_topics(servers, [topic])
    commands = Commands()
    db = MongoClient(servers.mongodb_uri, event_listeners=[commands])[f"feedback_test_relay_{uuid.uuid4().hex[:8]}"]
    outbox = Outbox(db, topic)
    outbox.add(None, "thing.created", "w", {"n": 1})  # waiting before the relay starts
    publisher = relay.OutboxRelay(servers, db, "test")
    stop = threading.Event()
    loop = threading.Thread(target=publisher.run, args=(stop,))
    reader = KafkaConsumer(bootstrap_servers=servers.kafka_bootstrap_servers, group_id=None)  # no group to join
    reader.assign([TopicPartition(topic, p) for p in reader.partitions_for_topic(topic)])
    reader.seek_to_beginning()
    got = []

    def received(n):
        for records in reader.poll(timeout_ms=500).values():
            got.extend(json.loads(r.value)["data"]["n"] for r in records)
        return len(got) >= n

    loop.start()
    try:
        wait_for(lambda: received(1), timeout=30, what="the event written before the relay started")
        reads = commands.count("find", "outbox")
        stop.wait(4)
        assert commands.count("find", "outbox") == reads, "quiet waits: no read of the outbox"
        assert commands.count("findAndModify", "locks") >= 1, "the lease is still renewed"
        outbox.add(None, "thing.created", "w", {"n": 2})
        wait_for(lambda: received(2), timeout=10, what="the event inserted while the relay was idle")
    finally:
        stop.set()
        loop.join(30)
        reader.close()
    assert got == [1, 2]
