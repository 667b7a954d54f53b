"""Every database command and outbox write of the domains service.

The service layer decides; this module knows where a workspace's domain document lives and
how to change it. A status change and its event commit together: the service runs its work
in :meth:`transaction`, and the write methods take the event's outbox write (:meth:`event`)
and apply it in the same session.

The collection holds one small document per workspace, so updates use findAndModify: it
answers the document as written, which is what the caller returns.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from common.db import Insert, Store, new_document
from common.repository import Repository
from pymongo import ReturnDocument
from pymongo.client_session import ClientSession

from domains import contract
from domains.models import DomainConfig

T = TypeVar("T")

# What a document holds once its domain is removed (status none; the document is kept).
CLEARED = {"status": contract.NONE, "errors": [], "verifiedAt": None, "checkedAt": None, "nextCheckAt": None,
           "deadline": None, "attempts": 0, "inconclusive": 0}


class DomainRepository(Repository):
    def __init__(self, store: Store):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.domains = store.collection(DomainConfig)

    # -- transactions and events ---------------------------------------------------------

    # -- reads -----------------------------------------------------------------------------

    def find(self, slug: str, session: ClientSession | None = None) -> dict | None:
        return self.domains.find_one({"_id": slug}, session=session)

    def find_checked(self, session: ClientSession, slug: str, domain: str, token: str) -> dict | None:
        """The workspace's document if it still has the domain and token a check was made for."""
        return self.domains.find_one({"_id": slug, "domain": domain, "token": token}, session=session)

    def owner_of_verified(self, domain: str, session: ClientSession | None = None) -> str | None:
        """The slug of the workspace whose verified domain is ``domain`` (one at most: the
        partial unique index)."""
        doc = self.domains.find_one({"domain": domain, "status": contract.VERIFIED}, projection={"_id": 1}, session=session)
        return None if doc is None else doc["_id"]

    # -- writes (in the caller's transaction, with their event) ----------------------------

    def create(self, session: ClientSession, slug: str, fields: dict, event: Insert) -> dict:
        """Store the first domain of a workspace. A concurrent first write of this one raises
        DuplicateKeyError."""
        doc = new_document(DomainConfig, slug=slug, **fields)
        event.apply(session)
        Insert(self.domains, doc).apply(session)
        return doc

    def update(self, session: ClientSession, slug: str, fields: dict, event: Insert | None) -> dict:
        """Set ``fields`` on the workspace's document; answer it as written. Verifying a domain
        another workspace holds verified raises DuplicateKeyError."""
        if event is not None:
            event.apply(session)
        return self.domains.find_one_and_update(
            {"_id": slug}, {"$set": fields}, return_document=ReturnDocument.AFTER, session=session
        )

    def clear(self, session: ClientSession, slug: str, at: datetime, event: Insert) -> None:
        """Remove the workspace's domain and token (status none), releasing the domain."""
        event.apply(session)
        self.domains.update_one(
            {"_id": slug}, {"$set": {**CLEARED, "updatedAt": at}, "$unset": {"domain": "", "token": ""}}, session=session
        )

    # -- the worker's claims -------------------------------------------------------------

    def claim_due(self, at: datetime, lease_until: datetime, limit: int) -> list[dict]:
        """Claim up to ``limit`` documents whose check is due at ``at`` by moving their
        ``nextCheckAt`` to ``lease_until``; answer the claimed ones. Several workers may run:
        each claim is conditional on the ``nextCheckAt`` and token it saw, so one wins."""
        due = self.domains.find(
            {"nextCheckAt": {"$lte": at}, "status": {"$in": list(contract.CHECKED_BY_WORKER)}},
            sort=[("nextCheckAt", 1)],
            limit=limit,
        )
        claimed = []
        for doc in list(due):
            won = self.domains.find_one_and_update(
                {"_id": doc["_id"], "nextCheckAt": doc["nextCheckAt"], "token": doc.get("token")},
                {"$set": {"nextCheckAt": lease_until}},
                return_document=ReturnDocument.AFTER,
            )
            if won is not None:
                claimed.append(won)
        return claimed
