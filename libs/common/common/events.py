"""The event envelope and the transactional outbox.

A state change and its event are written in one MongoDB transaction: the event lands
in the service's ``outbox`` collection, and :mod:`common.relay` publishes it to Kafka.
If Kafka is down the write still succeeds; the event waits in the outbox.

Envelope: ``{"id", "type", "timestamp", "workspace", "data"}``; Kafka key = workspace
slug, so the events of one workspace stay ordered within their topic.

Each event is defined once, by its JSON schema in the service's ``contract.EVENTS``: the
webhook catalog, the OpenAPI document's ``webhooks`` and docs/events.md derive from it, and
with ``FEEDBACK_CHECK_EVENTS`` set (the test kit sets it for the whole suite) every event
written to an outbox is validated against it, so an emission site that drifts from its
contract fails the test that reaches it.
"""

from __future__ import annotations

import time
import uuid
from typing import Mapping

from bson import ObjectId
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
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


class EventOffContract(Exception):
    """An event its service's contract does not declare, or whose data is off the declared
    schema. Not a client's error (no ``FeedbackError``): a request that meets it answers 500."""


def event_validators(schemas: Mapping[str, dict]) -> dict[str, Draft202012Validator]:
    """A validator of each declared event's data (a contract's ``EVENTS``), formats included:
    a ``date-time`` must be one."""
    return {type_: Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            for type_, schema in schemas.items()}


def check_event(validators: Mapping[str, Draft202012Validator], type_: str, data: dict) -> None:
    """Raise :class:`EventOffContract` unless ``type_`` is declared and ``data`` matches its schema."""
    validator = validators.get(type_)
    if validator is None:
        raise EventOffContract(f"event '{type_}' is not declared in its service's contract.EVENTS")
    error = best_match(validator.iter_errors(data))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "data"
        raise EventOffContract(f"event '{type_}' is off its contract at {where}: {error.message}")


class Outbox:
    """Adds events to the service's outbox inside the caller's transaction.

    ``schemas``: the service's ``contract.EVENTS``, given to check every event against them
    (``Settings.check_events``); ``None`` writes events unchecked."""

    def __init__(self, db: Database, topic: str, schemas: Mapping[str, dict] | None = None):
        self.collection = db[OUTBOX]
        self.topic = topic
        self.validators = None if schemas is None else event_validators(schemas)

    def document(self, type_: str, workspace: str, data: dict) -> dict:
        """The outbox document of a new event, for callers that batch their own writes."""
        if self.validators is not None:
            check_event(self.validators, type_, data)
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
