"""Every database command and outbox write of the domains service.

The service layer decides; this module knows where a workspace's domain document lives and
how to change it. A status change and its event commit together: the service runs its work
in :meth:`unit_of_work`, whose ``tx`` reads in its transaction and collects the writes below
with the event's outbox write (:meth:`event`).

The collection holds one small document per workspace, and a change sets whole fields: the
document as written is the one read with the fields set, which is what the caller returns.
"""

from __future__ import annotations

from datetime import datetime

from common.db import Insert, Store, Update, new_document
from common.repository import Repository
from pymongo import ReturnDocument

from domains import contract
from domains.models import DomainConfig

# What a document holds once its domain is removed (status none; the document is kept).
CLEARED = {"status": contract.NONE, "errors": [], "verifiedAt": None, "checkedAt": None, "nextCheckAt": None,
           "deadline": None, "attempts": 0, "inconclusive": 0}


class DomainRepository(Repository):
    def __init__(self, store: Store):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.domains = store.collection(DomainConfig)

    # -- reads -----------------------------------------------------------------------------

    def configuration(self, slug: str) -> dict | None:
        """The workspace's domain document."""
        return self.domains.find_one({"_id": slug}, session=self.session)

    def configuration_if_unchanged(self, slug: str, domain: str, token: str) -> dict | None:
        """The workspace's document if it still has the domain and token a check was made for."""
        return self.domains.find_one({"_id": slug, "domain": domain, "token": token}, session=self.session)

    def owner_of_verified(self, domain: str) -> str | None:
        """The slug of the workspace whose verified domain is ``domain`` (one at most: the
        partial unique index)."""
        doc = self.domains.find_one({"domain": domain, "status": contract.VERIFIED}, projection={"_id": 1}, session=self.session)
        return None if doc is None else doc["_id"]

    # -- writes (for the unit of work that read the document, beside their event) -----------

    @staticmethod
    def new_configuration(slug: str, fields: dict) -> dict:
        """The first domain document of a workspace."""
        return new_document(DomainConfig, slug=slug, **fields)

    def create(self, doc: dict) -> Insert:
        """Store a workspace's first domain document. A concurrent first write of this one
        raises DuplicateKeyError."""
        return Insert(self.domains, doc)

    def update(self, slug: str, fields: dict) -> Update:
        """Set ``fields`` on the workspace's document. Verifying a domain another workspace
        holds verified raises DuplicateKeyError."""
        return Update(self.domains, {"_id": slug}, {"$set": fields})

    def clear(self, slug: str, at: datetime) -> Update:
        """Remove the workspace's domain and token (status none), releasing the domain."""
        return Update(self.domains, {"_id": slug}, {"$set": {**CLEARED, "updatedAt": at}, "$unset": {"domain": "", "token": ""}})

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
