"""What every service's repository shares: its store's units of work (transactions) and bulk
writes, and the outbox events that commit with them. A service's ``repository.py`` subclasses it
and adds the commands on its own collections, named for what they mean (``count_vote``), so no
service speaks MongoDB.

A unit of work (cosmicpython's): ``repo.unit_of_work(work)`` runs ``work(tx)`` in one
transaction, where ``tx`` is the repository bound to it. What ``tx`` reads sees one snapshot;
what ``tx.add(...)`` collects is written in one round trip when ``work`` returns; all of it
commits or none does. ``work`` runs again on a write conflict, so it only reads and adds.
"""

from __future__ import annotations

import copy
from typing import Callable, Mapping, TypeVar

from pymongo.client_session import ClientSession

from common.db import Insert, Store, Write
from common.events import Outbox

T = TypeVar("T")
R = TypeVar("R", bound="Repository")


class Repository:
    # The transaction a unit of work's copy reads and writes in (None outside one): a command
    # passes it on as ``session=self.session``.
    session: ClientSession | None = None

    def __init__(self, store: Store, topic: str, events: Mapping[str, dict]):
        """``topic`` and ``events``: the service's ``contract.TOPIC`` and ``contract.EVENTS``
        (every event it writes is checked against them when ``Settings.check_events`` is on)."""
        self.store = store
        self.outbox = Outbox(store.db, topic, events if store.check_events else None)

    def unit_of_work(self: R, work: Callable[[R], T], *, hot_key: str | None = None) -> T:
        """Run ``work(tx)`` as one transaction (module docstring), again on a write conflict;
        ``hot_key`` names the document every such transaction writes (a post's counters), so
        this process's writers queue instead of conflicting."""

        def run(session: ClientSession) -> T:
            tx = copy.copy(self)
            tx.session, tx._pending = session, []
            result = work(tx)
            tx.flush()
            return result

        return self.store.transaction(run, hot_key=hot_key)

    def add(self, *writes: Write) -> None:
        """Writes this unit of work makes when its ``work`` returns (in the order added)."""
        if self.session is None:
            raise RuntimeError("add() belongs to a unit of work: repo.unit_of_work(lambda tx: tx.add(...))")
        self._pending.extend(writes)

    def flush(self) -> list[int]:
        """Write what was added so far now, in one round trip; how many documents each write
        matched (a unit of work that needs a count to decide, e.g. to abort when a delete found
        nothing, flushes first)."""
        pending, self._pending = self._pending, []
        return self.store.write(self.session, pending) if pending else []

    def event(self, slug: str, type_: str, data: dict) -> Insert:
        """The outbox write of an event, to apply beside the change it reports."""
        return self.outbox.insert(type_, slug, data)
