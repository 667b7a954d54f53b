"""MongoDB access: one database per service, connected through mongoengine.

Models are mongoengine Documents (fields, defaults, indexes) bound to the service's
connection alias. Writes that must commit together with an outbox event go through
pymongo on the same collections inside a transaction, because mongoengine 0.29 has no
session support; each service's ``repository.py`` is the one place that does so. A repository
gets a model's collection from its store (:meth:`Store.collection`), by the name the model
declares in ``COLLECTION``: mongoengine has no public way to give either.
Transactions need a replica set on real MongoDB (the chart's values say so); the local
SecantusDB server supports them.

Several writes of one transaction go to the server as one client ``bulkWrite`` where it has
one (MongoDB 8), else one command each: :class:`Insert`, :class:`Update`, :class:`Delete`
and :meth:`Store.write`.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, TypeVar

import mongoengine
from pymongo import DeleteMany, DeleteOne, InsertOne, UpdateMany, UpdateOne
from pymongo.client_session import ClientSession
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import (
    BulkWriteError,
    ClientBulkWriteException,
    ConfigurationError,
    ConnectionFailure,
    DuplicateKeyError,
    InvalidOperation,
    OperationFailure,
    PyMongoError,
)
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from common import dbmetrics
from common.config import Settings
from common.errors import Unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")
TRANSIENT = "TransientTransactionError"
UNKNOWN_COMMIT = "UnknownTransactionCommitResult"
DUPLICATE_KEY = 11000
WRITE_CONFLICT = 112
# Striped, so the locks are few and fixed; two keys sharing a stripe merely take turns.
HOT_LOCK_STRIPES = 64
_HOT_LOCKS = tuple(threading.Lock() for _ in range(HOT_LOCK_STRIPES))


def insert_new(collection: Collection, documents: Sequence[dict]) -> list[int]:
    """Insert ``documents`` in one round trip, each unless its unique key is taken already (a
    replayed event, a pair suggested before): the positions of those inserted. Any other write
    error raises."""
    if not documents:
        return []
    try:
        collection.insert_many(documents, ordered=False)
        return list(range(len(documents)))
    except BulkWriteError as ex:
        errors = ex.details.get("writeErrors", [])
        if any(e.get("code") != DUPLICATE_KEY for e in errors):
            raise
        taken = {e["index"] for e in errors}
        return [i for i in range(len(documents)) if i not in taken]

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
        self.bulk_supported: bool | None = None  # learnt on the first write
        self._indexed: set[type[mongoengine.Document]] = set()
        self.check_events = settings.check_events  # tests: outbox events are checked against the contract

    def collection(self, model: type[mongoengine.Document]) -> Collection:
        """``model``'s pymongo collection in this store's database: the one its ``COLLECTION``
        names (and its ``meta``, for mongoengine). The first time a model is asked for, its
        indexes are ensured, as mongoengine does on a model's first use: a process started
        without ``feedback init`` still has them."""
        if model not in self._indexed:
            model.ensure_indexes()
            self._indexed.add(model)
        return self.db[model.COLLECTION]

    def write(self, session: ClientSession, writes: Sequence["Write"]) -> list[int]:
        """Apply ``writes`` in order inside ``session``'s transaction, in one round trip where
        the server has client ``bulkWrite``; return the count each touched (matched for
        updates, deleted for deletes, 0 for inserts). A duplicate key raises
        DuplicateKeyError; a write conflict aborts so :meth:`transaction` runs the work again."""
        if writes and session is not None and session.operation_time is None:
            # Nothing has run in this transaction yet. A client bulkWrite that opens one carries
            # the transaction's readConcern, which the local stand-in refuses: the first write
            # opens it on its own (``operation_time`` is set by the session's first answer).
            return [writes[0].apply(session), *self.write(session, writes[1:])]
        if not writes:
            return []
        if self.bulk_supported is not False:
            try:
                result = self.client.bulk_write([w.bulk_op() for w in writes], session=session, verbose_results=True, ordered=True)
                self.bulk_supported = True
                deleted, updated = result.delete_results or {}, result.update_results or {}
                return [
                    deleted[i].deleted_count if i in deleted else updated[i].matched_count if i in updated else 0
                    for i in range(len(writes))
                ]
            except ClientBulkWriteException as ex:
                codes = [e.get("code") for e in (ex.write_errors or [])]
                if DUPLICATE_KEY in codes:
                    raise DuplicateKeyError("duplicate key", DUPLICATE_KEY) from None
                inner = ex.error if isinstance(ex.error, PyMongoError) else None
                if WRITE_CONFLICT in codes or (inner is not None and inner.has_error_label(TRANSIENT)):
                    raise _Retry("write conflict") from ex
                raise
            except (InvalidOperation, OperationFailure, ConfigurationError) as ex:
                if self.bulk_supported or (isinstance(ex, OperationFailure) and ex.has_error_label(TRANSIENT)):
                    raise
                self.bulk_supported = False  # a server before MongoDB 8: one command per write
                raise _Retry("client bulkWrite unsupported; retrying without it") from ex
        return [w.apply(session) for w in writes]

    def transaction(self, work: Callable[[ClientSession], T], deadline: float = 30.0, *, hot_key: str | None = None) -> T:
        """Run ``work(session)`` in one transaction; retry it on write conflicts.

        pymongo's ``with_transaction`` retries a conflicting transaction at once, which
        livelocks on a hot document (docs/benchmarks.md). Here a conflict aborts and retries after a short,
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


def changes(collection: Collection, wait_seconds: float, pipeline: Sequence[dict] = ()):
    """A change stream of ``collection`` whose ``try_next()`` waits at the server up to
    ``wait_seconds`` for a change, or None where the database has none (a standalone server;
    the platform's replica sets and the local stand-in have them). Idle loops wait on it
    instead of polling; open it before the read it follows, so no change after that read is
    missed."""
    try:
        return collection.watch(list(pipeline), max_await_time_ms=int(wait_seconds * 1000))
    except OperationFailure:
        return None


class ChangeHub:
    """One change stream of the whole deployment for every :class:`ChangeWaiter` of a process
    (``share_change_streams``): where one process runs every service (``make run``), a dozen idle
    loops would each hold a stream, and a server that ends every waiting stream's wait at any
    write (the local stand-in) would answer a dozen getMores per write. The hub's one stream
    hands each change to the waiters of its collection."""

    def __init__(self, uri: str):
        from pymongo import MongoClient

        self.client = MongoClient(uri, serverSelectionTimeoutMS=3000, connectTimeoutMS=3000)
        self._waiters: dict[tuple[str, str], list["_HubWaiter"]] = {}
        self._lock = threading.Lock()
        self._watched: frozenset[str] = frozenset()  # the collection names the open stream passes
        self._thread: threading.Thread | None = None
        self.broken = False

    def waiter(self, collection: Collection) -> "_HubWaiter":
        waiter = _HubWaiter()
        with self._lock:
            self._waiters.setdefault((collection.database.name, collection.name), []).append(waiter)
            if self._thread is None:  # started by the first waiter, after the process's loops are built
                self._thread = threading.Thread(target=self._run, name="change-hub", daemon=True)
                self._thread.start()
        return waiter

    def _names(self) -> frozenset[str]:
        with self._lock:
            return frozenset(coll for _, coll in self._waiters)

    def _run(self) -> None:
        token = None
        while True:
            try:
                self._watched = self._names()
                # Only the collections waited on, and only what a waiter reads of a change.
                pipeline = [{"$match": {"ns.coll": {"$in": sorted(self._watched)}}},
                            {"$project": {"ns": 1, "operationType": 1, "documentKey": 1}}]
                with self.client.watch(pipeline, max_await_time_ms=30_000, resume_after=token) as stream:
                    while stream.alive:
                        change = stream.try_next()
                        token = stream.resume_token
                        if change is not None:
                            self._hand_over(change)
                        if self._names() != self._watched:
                            break  # a waiter of another collection came: watch it too
            except OperationFailure:
                self.broken = True  # no deployment-wide streams here: each waiter keeps its own
                log.info("change hub: the database has no deployment-wide change streams; each loop watches its own")
                self._wake_all()
                return
            except PyMongoError:
                log.warning("change hub: the stream failed; reopening", exc_info=True)
                token = None
                self._wake_all()  # what came meanwhile is looked for by every waiter
                time.sleep(1)

    def _hand_over(self, change: dict) -> None:
        ns = change.get("ns") or {}
        with self._lock:
            waiters = list(self._waiters.get((ns.get("db"), ns.get("coll")), ()))
        for waiter in waiters:
            waiter.push(change)

    def _wake_all(self) -> None:
        with self._lock:
            waiters = [w for group in self._waiters.values() for w in group]
        for waiter in waiters:
            waiter.push({})


class _HubWaiter:
    MAX_KEPT = 1000  # changes kept for one wait; past it, just "something changed"

    def __init__(self):
        self.changed = threading.Condition()
        self.changes: list[dict] = []

    def push(self, change: dict) -> None:
        with self.changed:
            if len(self.changes) < self.MAX_KEPT:
                self.changes.append(change)
            else:
                self.changes[-1] = {}
            self.changed.notify_all()

    def clear(self) -> None:
        with self.changed:
            self.changes.clear()

    def wait(self, seconds: float, seen: Callable[[dict], bool]) -> bool:
        """True when a change came (or the hub's stream failed: ``{}``), False when the time ran out."""
        deadline = time.monotonic() + seconds
        with self.changed:
            while True:
                while self.changes:
                    change = self.changes.pop(0)
                    if not change or not seen(change):
                        self.changes.clear()
                        return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)


_HUB: ChangeHub | None = None


def share_change_streams(settings: Settings) -> None:
    """Let every :class:`ChangeWaiter` made from now on in this process wait on one
    deployment-wide stream (:class:`ChangeHub`) rather than one stream each."""
    global _HUB
    if _HUB is None:
        _HUB = ChangeHub(settings.mongodb_uri)


class ChangeWaiter:
    """An idle loop's wait for changes to a collection: one change stream kept open from wait to
    wait (opening one and closing it again costs the database three commands; an open one costs
    one per ``wait_seconds`` while nothing changes), or a plain pause where the database has no
    change streams. ``arm()`` before the read a wait follows, so no change after it is missed.
    The wait ends with a change of this collection (that ``seen`` does not pass over), not with
    a server's early empty answer."""

    def __init__(self, collection: Collection, wait_seconds: float, pipeline: Sequence[dict] = (), what: str = ""):
        self.collection = collection
        self.wait_seconds = wait_seconds
        self.pipeline = list(pipeline)
        self.what = what or collection.name
        self._stream = None
        self._streams = True
        self._hub = _HUB
        self._shared = _HUB.waiter(collection) if _HUB is not None else None

    def arm(self) -> None:
        if self._shared is not None and not self._hub.broken:
            self._shared.clear()  # what changed before the read that follows, the read sees
            return
        if self._stream is None and self._streams:
            self._stream = changes(self.collection, self.wait_seconds, self.pipeline)
            if self._stream is None:
                self._streams = False
                log.info("%s: no change streams on this database; looking every %.2fs", self.what, self.wait_seconds)

    def wait(self, stop: threading.Event, pause: float | None = None, seen: Callable[[dict], bool] = lambda change: False) -> bool:
        """Until a change that ``seen`` does not pass over comes, or ``wait_seconds`` pass (the
        database holds the wait); without change streams, ``pause`` seconds (``wait_seconds``
        by default). False when the time ran out on a stream that missed nothing since
        ``arm()`` (nothing changed: a loop may wait again without reading, and without arming);
        True when a change came, or where a pause cannot tell."""
        if self._shared is not None and not self._hub.broken:
            return self._shared.wait(self.wait_seconds, seen)
        if self._stream is None:
            stop.wait(self.wait_seconds if pause is None else pause)
            return True
        # A server may end a wait early with nothing for this stream (the local stand-in ends
        # every waiting stream's wait at any write anywhere): wait on until the time is up.
        deadline = time.monotonic() + self.wait_seconds
        try:
            while not stop.is_set():
                change = self._stream.try_next()
                if change is not None and not seen(change):
                    return True
                if change is None and time.monotonic() >= deadline - 0.01:
                    return False
            return True
        except PyMongoError:
            self.close()  # reopened by the next arm(), after a read
            raise

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.close()
            except PyMongoError:
                pass
            self._stream = None


def new_document(model: type[mongoengine.Document], **fields) -> dict:
    """A new stored document of ``model``, as pymongo writes it: the model's defaults filled
    in and its fields validated, so a document's shape is declared once, in ``models.py``."""
    document = model(**fields)
    document.validate()
    return document.to_mongo().to_dict()


@dataclass(frozen=True)
class Insert:
    collection: Collection
    document: dict

    def bulk_op(self) -> InsertOne:
        return InsertOne(self.document, namespace=self.collection.full_name)

    def apply(self, session: ClientSession) -> int:
        self.collection.insert_one(self.document, session=session)
        return 0


@dataclass(frozen=True)
class Update:
    collection: Collection
    filter: dict
    change: dict
    upsert: bool = False
    many: bool = False

    def bulk_op(self) -> UpdateOne | UpdateMany:
        op = UpdateMany if self.many else UpdateOne
        return op(self.filter, self.change, upsert=self.upsert, namespace=self.collection.full_name)

    def apply(self, session: ClientSession) -> int:
        update = self.collection.update_many if self.many else self.collection.update_one
        return update(self.filter, self.change, upsert=self.upsert, session=session).matched_count


@dataclass(frozen=True)
class Delete:
    collection: Collection
    filter: dict
    many: bool = False

    def bulk_op(self) -> DeleteOne | DeleteMany:
        return (DeleteMany if self.many else DeleteOne)(self.filter, namespace=self.collection.full_name)

    def apply(self, session: ClientSession) -> int:
        delete = self.collection.delete_many if self.many else self.collection.delete_one
        return delete(self.filter, session=session).deleted_count


Write = Insert | Update | Delete


class _Retry(PyMongoError):
    """Run the transaction again: a conflict inside a client bulkWrite, or a server without it."""

    def __init__(self, message: str):
        super().__init__(message, error_labels=[TRANSIENT])


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
