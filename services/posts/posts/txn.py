"""Writes to several collections in one round trip inside a transaction (``CrossWriter``).

Transactions themselves run through ``common.db.Store.transaction`` (retried on conflicts).
"""

from __future__ import annotations

from pymongo.errors import (
    ClientBulkWriteException,
    ConfigurationError,
    DuplicateKeyError,
    InvalidOperation,
    OperationFailure,
    PyMongoError,
)

TRANSIENT = "TransientTransactionError"
DUPLICATE_KEY = 11000
WRITE_CONFLICT = 112


class CrossWriter:
    """Several inserts/deletes on different collections in one round trip where the server
    can (MongoDB 8's client-level ``bulkWrite``; SecantusDB has it too), else one command each.

    A vote writes its vote document, the post's counter and its outbox event this way, so a
    vote costs three round trips (reading the post, this, the commit) instead of five.
    """

    def __init__(self, client):
        self.client = client
        self.supported: bool | None = None  # learnt on first use

    def write(self, session, ops: list) -> list[int]:
        """Apply ``ops`` (pymongo InsertOne/UpdateOne/DeleteOne/DeleteMany with ``namespace``) in
        order; return the count each op touched (deleted for deletes, matched for updates, 0 for
        inserts). A duplicate key raises DuplicateKeyError."""
        if self.supported is not False:
            try:
                result = self.client.bulk_write(ops, session=session, verbose_results=True, ordered=True)
                self.supported = True
                deleted, updated = result.delete_results or {}, result.update_results or {}
                return [
                    deleted[i].deleted_count if i in deleted else updated[i].matched_count if i in updated else 0
                    for i in range(len(ops))
                ]
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
        if kind == "UpdateOne":
            return collection.update_one(op._filter, op._doc, session=session).matched_count
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
