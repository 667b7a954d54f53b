"""An outbox whose events of one workspace keep their order across processes.

NOTE: common.events.Outbox orders events by a fresh ObjectId, whose first 4 bytes are
whole seconds and the next 5 a per-process random value: two events of one workspace
written in the same second by two processes (two gunicorn workers, or the API and the
re-check worker) can reach the relay, and Kafka, in the wrong order. Here each
workspace's document remembers its last event id (updated in the same transaction, so
writers of one workspace serialise on it) and the next id is made larger than it.
The same race can reorder any service's events; this module keeps the domains events right.
"""

from __future__ import annotations

from bson import ObjectId

from common.events import Outbox, envelope


def id_after(previous: ObjectId | None) -> ObjectId:
    """A fresh ObjectId, or, when that would sort before ``previous``, one second after it.

    The bumped id keeps this process's random bytes and counter from the fresh id, so it
    is as unique as the fresh one (``previous + 1`` would be the next id its own process
    makes, for another workspace).
    """
    fresh = ObjectId()
    if previous is None or fresh > previous:
        return fresh
    seconds = int.from_bytes(previous.binary[:4], "big") + 1
    return ObjectId(seconds.to_bytes(4, "big") + fresh.binary[4:])


class OrderedOutbox(Outbox):
    def add_after(self, session, previous: ObjectId | None, type_: str, workspace: str, data: dict) -> ObjectId:
        """Add an event ordered after ``previous``; return its id (store it as the new anchor)."""
        event_id = id_after(previous)
        self.collection.insert_one(
            {"_id": event_id, "topic": self.topic, "key": workspace, "event": envelope(type_, workspace, data)}, session=session
        )
        return event_id
