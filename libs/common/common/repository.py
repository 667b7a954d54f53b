"""What every service's repository shares: its store's transactions and bulk writes, and the
outbox events that commit with them. A service's ``repository.py`` subclasses it and adds the
commands on its own collections."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence, TypeVar

from pymongo.client_session import ClientSession

from common.db import Insert, Store, Write
from common.events import Outbox

T = TypeVar("T")


class Repository:
    def __init__(self, store: Store, topic: str, events: Mapping[str, dict]):
        """``topic`` and ``events``: the service's ``contract.TOPIC`` and ``contract.EVENTS``
        (every event it writes is checked against them when ``Settings.check_events`` is on)."""
        self.store = store
        self.outbox = Outbox(store.db, topic, events if store.check_events else None)

    def transaction(self, work: Callable[[ClientSession], T], *, hot_key: str | None = None) -> T:
        """Run ``work(session)`` in one transaction, again on a write conflict (``hot_key``: the
        document every such transaction writes, so this process's writers queue instead)."""
        return self.store.transaction(work, hot_key=hot_key)

    def write(self, session: ClientSession, writes: Sequence[Write]) -> list[int]:
        """Several writes of one transaction in one round trip where the server can."""
        return self.store.write(session, writes)

    def event(self, slug: str, type_: str, data: dict) -> Insert:
        """The outbox write of an event, to apply beside the change it reports."""
        return self.outbox.insert(type_, slug, data)
