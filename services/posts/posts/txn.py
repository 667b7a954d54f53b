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
from pymongo.errors import PyMongoError
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from common.errors import Unavailable

T = TypeVar("T")
TRANSIENT = "TransientTransactionError"
UNKNOWN_COMMIT = "UnknownTransactionCommitResult"


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
