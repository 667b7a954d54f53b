"""MongoDB access: one database per service, connected through mongoengine.

Models are mongoengine Documents (fields, validation, indexes) bound to the service's
connection alias. Writes that must commit together with an outbox event go through
pymongo on the same collections (``Model._get_collection()``) inside a transaction,
because mongoengine 0.29 has no session support. Transactions need a replica set on
real MongoDB (the chart's values say so); the local SecantusDB server supports them.
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

import mongoengine
from pymongo.client_session import ClientSession
from pymongo.database import Database
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from common import dbmetrics
from common.config import Settings

T = TypeVar("T")


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

    def transaction(self, work: Callable[[ClientSession], T]) -> T:
        """Run ``work(session)`` in a transaction, retried on transient errors by pymongo."""
        with self.client.start_session() as session:
            return session.with_transaction(
                work,
                read_concern=ReadConcern("snapshot"),
                write_concern=WriteConcern("majority"),
            )

    def ping(self) -> None:
        self.client.admin.command("ping")

    def ensure_indexes(self, models: Iterable[type[mongoengine.Document]]) -> None:
        for model in models:
            model.ensure_indexes()

    def close(self) -> None:
        mongoengine.disconnect(self.alias)
