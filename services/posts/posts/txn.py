"""Transactions that survive contention.

``Store.transaction`` uses pymongo's ``with_transaction``, which retries a conflicting
transaction at once. On a hot document (50 voters on one post) that livelocks: measured
on the local SecantusDB server, 30 of 50 concurrent votes gave up after 120 s. Here a
transient failure aborts explicitly and retries after a short random, growing pause.
"""

from __future__ import annotations

import random
import time
from typing import Callable, TypeVar

from pymongo.client_session import ClientSession
from pymongo.errors import (
    ClientBulkWriteException,
    ConfigurationError,
    DuplicateKeyError,
    InvalidOperation,
    OperationFailure,
    PyMongoError,
)
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from common.errors import Unavailable

T = TypeVar("T")
TRANSIENT = "TransientTransactionError"
UNKNOWN_COMMIT = "UnknownTransactionCommitResult"
DUPLICATE_KEY = 11000
WRITE_CONFLICT = 112


def run(store, work: Callable[[ClientSession], T], deadline: float = 30.0) -> T:
    """Run ``work(session)`` in one transaction; retry it on transient conflicts."""
    give_up = time.monotonic() + deadline
    attempt = 0
    while True:
        attempt += 1
        with store.client.start_session() as session:
            session.start_transaction(read_concern=ReadConcern("snapshot"), write_concern=WriteConcern("majority"))
            try:
                result = work(session)
                _commit(session, give_up)
                return result
            except PyMongoError as ex:
                _abort(session)
                if not ex.has_error_label(TRANSIENT) or time.monotonic() > give_up:
                    raise
            except BaseException:
                _abort(session)
                raise
        time.sleep(random.uniform(0, min(0.2, 0.005 * 2 ** min(attempt, 6))))
        if time.monotonic() > give_up:
            raise Unavailable("too much contention on this item; try again")


def _commit(session: ClientSession, give_up: float) -> None:
    while True:
        try:
            session.commit_transaction()
            return
        except PyMongoError as ex:
            if ex.has_error_label(UNKNOWN_COMMIT) and time.monotonic() < give_up:
                continue
            raise


def _abort(session: ClientSession) -> None:
    if session.in_transaction:
        try:
            session.abort_transaction()
        except PyMongoError:
            pass  # the server drops an abandoned transaction by itself


class CrossWriter:
    """Several inserts/deletes on different collections in one round trip where the server
    can (MongoDB 8's client-level ``bulkWrite``; SecantusDB has it too), else one command each.

    A vote writes its vote document and its outbox event this way, so a vote costs three
    round trips (this, the post's counter, the commit) instead of four.
    """

    def __init__(self, client):
        self.client = client
        self.supported: bool | None = None  # learnt on first use

    def write(self, session, ops: list) -> list[int]:
        """Apply ``ops`` (pymongo InsertOne/DeleteOne/DeleteMany with ``namespace``) in order;
        return the deleted count of each op (0 for inserts). A duplicate key raises DuplicateKeyError."""
        if self.supported is not False:
            try:
                result = self.client.bulk_write(ops, session=session, verbose_results=True, ordered=True)
                self.supported = True
                deleted = result.delete_results or {}
                return [getattr(deleted.get(i), "deleted_count", 0) for i in range(len(ops))]
            except ClientBulkWriteException as ex:
                codes = [e.get("code") for e in (ex.write_errors or [])]
                if DUPLICATE_KEY in codes:
                    raise DuplicateKeyError("duplicate key", DUPLICATE_KEY) from None
                inner = ex.error if isinstance(ex.error, PyMongoError) else None
                if WRITE_CONFLICT in codes or (inner is not None and inner.has_error_label(TRANSIENT)):
                    raise Conflicted() from ex
                raise
            except (InvalidOperation, OperationFailure, ConfigurationError) as ex:
                if self.supported or (isinstance(ex, OperationFailure) and ex.has_error_label(TRANSIENT)):
                    raise
                self.supported = False  # a server before MongoDB 8: one command per write
                raise RetryWithoutBulk() from ex
        return [self._one(session, op) for op in ops]

    def _one(self, session, op) -> int:
        db_name, _, coll_name = op._namespace.partition(".")
        collection = self.client[db_name][coll_name]
        kind = type(op).__name__
        if kind == "InsertOne":
            collection.insert_one(op._doc, session=session)
            return 0
        if kind == "DeleteOne":
            return collection.delete_one(op._filter, session=session).deleted_count
        return collection.delete_many(op._filter, session=session).deleted_count


class Conflicted(PyMongoError):
    """A write conflict reported inside a client bulkWrite: retry the transaction."""

    def __init__(self):
        super().__init__("write conflict")
        self._add_error_label(TRANSIENT)


class RetryWithoutBulk(PyMongoError):
    """The server refused client bulkWrite: run the transaction again, one command per write."""

    def __init__(self):
        super().__init__("client bulkWrite unsupported; retrying without it")
        self._add_error_label(TRANSIENT)
