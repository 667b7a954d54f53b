"""The consumer runner against real local MongoDB- and Kafka-protocol servers: poison messages
are parked through one producer, which the runner closes when it stops; markers are looked up
only until a partition's first unmarked event."""

import json
import threading
import uuid

import pytest
from kafka.errors import IllegalStateError
from pymongo import MongoClient

from common.consumer import ConsumerRunner
from common.ids import now
from common.kafka import create_topics, dlq, make_consumer, make_producer
from testkit import wait_for

from .commands import Commands


class CountingRunner(ConsumerRunner):
    """The runner as it is, noting each producer it opens."""

    def __init__(self, *args):
        super().__init__(*args)
        self.producers = []

    def _open_producer(self):
        producer = super()._open_producer()
        self.producers.append(producer)
        return producer


def test_poison_messages_are_parked_through_one_producer_closed_on_stop(servers):
    topic = f"test-poison-{uuid.uuid4().hex[:8]}"
    create_topics(servers, [topic, dlq(topic)])
    producer = make_producer(servers)
    for raw in (b"not json", json.dumps({"id": "e1", "type": "x", "workspace": "w", "data": {}}).encode()):
        producer.send(topic, raw)
    producer.flush(timeout=10)
    producer.close()

    def broken(event):
        raise ValueError("bug")

    db = MongoClient(servers.mongodb_uri)["feedback_test_consumer"]
    runner = CountingRunner(servers, db, f"group-{uuid.uuid4().hex}", {topic: broken})
    stop = threading.Event()
    loop = threading.Thread(target=runner.run, args=(stop,))
    loop.start()
    parked = []
    reader = make_consumer(servers, f"reader-{uuid.uuid4().hex}", [dlq(topic)])
    try:
        def both_parked():
            for records in reader.poll(timeout_ms=500).values():
                parked.extend(json.loads(r.value) for r in records)
            return len(parked) >= 2

        wait_for(both_parked, timeout=30, what="two parked messages")
    finally:
        reader.close()
        stop.set()
        loop.join(30)
    assert not loop.is_alive()
    assert {p["reason"] for p in parked} == {"undecodable message", "ValueError('bug')"}
    assert len(runner.producers) == 1, "one producer parks every poison message"
    with pytest.raises(IllegalStateError):
        runner.producers[0].send(dlq(topic), b"after stop")  # closed when the runner stopped


def test_markers_are_looked_up_until_a_partitions_first_unmarked_event(servers):
    """An earlier owner handled e1 and e2 and stopped before committing: they are passed over,
    and after e3, found unmarked, no marker is looked up for the partition."""
    topic = f"test-markers-{uuid.uuid4().hex[:8]}"
    create_topics(servers, [topic])
    producer = make_producer(servers)
    for n in range(1, 6):
        producer.send(topic, json.dumps({"id": f"e{n}", "type": "x", "workspace": "w", "data": {}}).encode(), key=b"w")
    producer.flush(timeout=10)
    producer.close()
    group = f"group-{uuid.uuid4().hex}"
    commands = Commands()
    db = MongoClient(servers.mongodb_uri, event_listeners=[commands])["feedback_test_consumer"]
    db["processed_events"].insert_many([{"_id": f"{group}:e1", "at": now()}, {"_id": f"{group}:e2", "at": now()}])
    handled = []
    runner = ConsumerRunner(servers, db, group, {topic: lambda event: handled.append(event["id"])})
    stop = threading.Event()
    loop = threading.Thread(target=runner.run, args=(stop,))
    loop.start()
    try:
        wait_for(lambda: len(handled) >= 3, timeout=30, what="three events handled")
    finally:
        stop.set()
        loop.join(30)
    assert handled == ["e3", "e4", "e5"]
    assert commands.count("find", "processed_events") == 3, "e1 and e2 found marked, e3 not: e4 and e5 are not looked up"
    assert db["processed_events"].count_documents({"_id": {"$regex": f"^{group}:"}}) == 5
