"""The event envelope and the transactional outbox.

A state change and its event are written in one MongoDB transaction: the event lands
in the service's ``outbox`` collection, and :mod:`common.relay` publishes it to Kafka.
If Kafka is down the write still succeeds; the event waits in the outbox.

Envelope: ``{"id", "type", "timestamp", "workspace", "data"}``; Kafka key = workspace
slug, so the events of one workspace stay ordered within their topic.
"""

from __future__ import annotations

import time
import uuid

from bson import ObjectId
from pymongo.client_session import ClientSession
from pymongo.database import Database

from common.db import Insert
from common.ids import iso, now

OUTBOX = "outbox"


def envelope(type_: str, workspace: str, data: dict) -> dict:
    return {
        "id": uuid.uuid4().hex,
        "type": type_,
        "timestamp": iso(now()),
        "workspace": workspace,
        "data": data,
    }


class Outbox:
    """Adds events to the service's outbox inside the caller's transaction."""

    def __init__(self, db: Database, topic: str):
        self.collection = db[OUTBOX]
        self.topic = topic

    def document(self, type_: str, workspace: str, data: dict) -> dict:
        """The outbox document of a new event, for callers that batch their own writes."""
        # The relay publishes in ``at`` order. An ObjectId alone would not do: its time part
        # has whole seconds, and within one second ids of two processes sort by their random
        # part. Writes to one document serialise in MongoDB (a second writer retries after the
        # first commits), so nanosecond write times keep such events in commit order.
        event = envelope(type_, workspace, data)
        return {"_id": ObjectId(), "at": time.time_ns(), "topic": self.topic, "key": workspace, "event": event}

    def insert(self, type_: str, workspace: str, data: dict) -> "Insert":
        """The outbox write of a new event, for :meth:`common.db.Store.write` beside the change it reports."""
        return Insert(self.collection, self.document(type_, workspace, data))

    def add(self, session: ClientSession | None, type_: str, workspace: str, data: dict) -> dict:
        doc = self.document(type_, workspace, data)
        self.collection.insert_one(doc, session=session)
        return doc["event"]
