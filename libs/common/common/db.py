"""MongoDB access: one database per service, connected through mongoengine.

Models are mongoengine Documents (fields, validation, indexes) bound to the service's
connection alias. Writes that must commit together with an outbox event go through
pymongo on the same collections (``Model._get_collection()``) inside a transaction,
because mongoengine 0.29 has no session support. Transactions need a replica set on
real MongoDB (the chart's values say so); the local SecantusDB server supports them.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Callable, Iterable, TypeVar

import mongoengine
from pymongo.client_session import ClientSession
from pymongo.database import Database
from pymongo.errors import ConnectionFailure, PyMongoError
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from common import dbmetrics
from common.config import Settings
from common.errors import Unavailable

T = TypeVar("T")
TRANSIENT = "TransientTransactionError"
UNKNOWN_COMMIT = "UnknownTransactionCommitResult"
# Striped, so the locks are few and fixed; two keys sharing a stripe merely take turns.
HOT_LOCK_STRIPES = 64
_HOT_LOCKS = tuple(threading.Lock() for _ in range(HOT_LOCK_STRIPES))


class Store:
    """The service's database and a way to run a function in one transaction."""

    def __init__(self, settings: Settings, service: str):
        self.alias = service
        name = settings.db_prefix + service
        mongoengine.connect(
            db=name,
            host=settings.mongodb_uri,
            alias=service,
            tz_aware=True,
            serverSelectionTimeoutMS=3000,
            connectTimeoutMS=3000,
            uuidRepresentation="standard",
            event_listeners=[dbmetrics.LISTENER],
        )
        self.client = mongoengine.get_connection(service)
        self.db: Database = mongoengine.get_db(service)

    def transaction(self, work: Callable[[ClientSession], T], deadline: float = 30.0, *, hot_key: str | None = None) -> T:
        """Run ``work(session)`` in one transaction; retry it on write conflicts.

        pymongo's ``with_transaction`` retries a conflicting transaction at once, which
        livelocks on a hot document (measured on SecantusDB: 30 of 50 concurrent votes on
        one post gave up after 120 s). Here a conflict aborts and retries after a short,
        random, growing pause. An unreachable database is not retried: the driver already
        waited its server-selection time, and the caller gets a 503 instead of a hang.

        ``hot_key`` names the document every such transaction writes (a post's counters):
        this process's transactions on one key then queue behind each other instead of
        conflicting, so only other processes' writers can conflict with them.
        """
        give_up = time.monotonic() + deadline
        if hot_key is None:
            return self._run(work, give_up)
        lock = _HOT_LOCKS[hash(hot_key) % HOT_LOCK_STRIPES]
        if not lock.acquire(timeout=deadline):
            raise Unavailable("too much contention on this item; try again")
        try:
            return self._run(work, give_up)
        finally:
            lock.release()

    def _run(self, work: Callable[[ClientSession], T], give_up: float) -> T:
        attempt = 0
        while True:
            attempt += 1
            with self.client.start_session() as session:
                session.start_transaction(read_concern=ReadConcern("snapshot"), write_concern=WriteConcern("majority"))
                try:
                    result = work(session)
                    _commit(session, give_up)
                    return result
                except PyMongoError as ex:
                    _abort(session)
                    if isinstance(ex, ConnectionFailure) or not ex.has_error_label(TRANSIENT) or time.monotonic() > give_up:
                        raise
                except BaseException:
                    _abort(session)
                    raise
            time.sleep(random.uniform(0, min(0.2, 0.005 * 2 ** min(attempt, 6))))
            if time.monotonic() > give_up:
                raise Unavailable("too much contention on this item; try again")

    def ping(self) -> None:
        self.client.admin.command("ping")

    def ensure_indexes(self, models: Iterable[type[mongoengine.Document]]) -> None:
        for model in models:
            model.ensure_indexes()

    def close(self) -> None:
        mongoengine.disconnect(self.alias)


def _commit(session: ClientSession, give_up: float) -> None:
    while True:
        try:
            session.commit_transaction()
            return
        except PyMongoError as ex:
            if ex.has_error_label(UNKNOWN_COMMIT) and not isinstance(ex, ConnectionFailure) and time.monotonic() < give_up:
                continue
            raise


def _abort(session: ClientSession) -> None:
    if session.in_transaction:
        try:
            session.abort_transaction()
        except PyMongoError:
            pass  # the server drops an abandoned transaction by itself
