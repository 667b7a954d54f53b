"""Every database command and outbox write of the workspaces service.

The service layer decides; this module knows where things are stored. A change others
should hear of commits in one transaction with its outbox event (:meth:`transaction`,
:meth:`publish`). Boards and statuses live inside their workspace document
(:mod:`workspaces.models`), so each change to a workspace is one atomic update that returns
the document its snapshot event is built from.

The SSO secret is stored sealed (:mod:`common.secretbox`): :meth:`seal` before it is written,
:meth:`sso_secret` to read it back. API keys are stored as their hash only.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from bson import ObjectId
from common.db import Insert, Store, new_document
from common.repository import Repository
from common.secretbox import SecretBox
from pymongo import ReturnDocument
from pymongo.client_session import ClientSession

from workspaces import contract
from workspaces.models import ApiKey, Board, Changelog, Status, Workspace

T = TypeVar("T")


class WorkspaceRepository(Repository):
    def __init__(self, store: Store, box: SecretBox):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.box = box
        self.workspaces = store.collection(Workspace)
        self.keys = store.collection(ApiKey)
        self.changelogs = store.collection(Changelog)

    # -- transactions and events ------------------------------------------------------------

    def publish(self, session: ClientSession, slug: str, type_: str, data: dict) -> None:
        """Add an event to the outbox inside ``session``'s transaction."""
        self.outbox.add(session, type_, slug, data)

    def publish_all(self, session: ClientSession, slug: str, events: list[tuple[str, dict]]) -> None:
        """Add ``(type, data)`` events to the outbox inside ``session``'s transaction, in order,
        with one command."""
        self.outbox.collection.insert_many([self.outbox.document(t, slug, d) for t, d in events], session=session)

    def _insert_all(self, writes: list[Insert | None]) -> None:
        """Insert new documents (and their event) in one transaction.

        One command each, not one bulk write: nothing is read first, and a client bulkWrite
        that opens a transaction carries the transaction's readConcern, which the local
        stand-in refuses. A duplicate key raises DuplicateKeyError and nothing is written."""

        def work(session):
            for write in writes:
                if write is not None:
                    write.apply(session)

        self.transaction(work)

    # -- workspaces -------------------------------------------------------------------------

    @staticmethod
    def new_workspace(**fields) -> dict:
        return new_document(Workspace, **fields)

    @staticmethod
    def new_board(**fields) -> dict:
        return new_document(Board, **fields)

    @staticmethod
    def new_status(**fields) -> dict:
        return new_document(Status, **fields)

    def find_workspace(self, slug: str) -> dict | None:
        return self.workspaces.find_one({"_id": slug})

    def workspace_exists(self, slug: str) -> bool:
        return self.workspaces.find_one({"_id": slug}, projection={"_id": 1}) is not None

    def add_workspace(self, doc: dict, key: dict, events: list[Insert]) -> None:
        """A new workspace, its first API key and their events, together."""
        self._insert_all([Insert(self.workspaces, doc), Insert(self.keys, key), *events])

    def seal(self, secret: str | None) -> str | None:
        """``secret`` as it is stored."""
        return None if secret is None else self.box.seal(secret)

    def sso_secret(self, doc: dict) -> str | None:
        """The workspace's SSO secret in clear (stored sealed, or in clear from before sealing)."""
        return self.box.open(doc.get("settings", {}).get("ssoSecret"))

    def update_workspace(self, session: ClientSession, slug: str, guard: dict, change: dict) -> dict | None:
        """Apply ``change`` to workspace ``slug`` if it also matches ``guard``; the document
        after the change, or None when nothing matched."""
        return self.workspaces.find_one_and_update(
            {"_id": slug, **guard}, change, return_document=ReturnDocument.AFTER, session=session
        )

    # -- API keys ---------------------------------------------------------------------------

    @staticmethod
    def new_key(**fields) -> dict:
        return new_document(ApiKey, **fields)

    def add_key(self, doc: dict, event: Insert) -> None:
        """A new API key and its ``api_key.created`` event, together."""
        self._insert_all([Insert(self.keys, doc), event])

    def keys_of(self, slug: str) -> list[dict]:
        return list(self.keys.find({"workspace": slug}, sort=[("createdAt", 1)]))

    def find_key(self, slug: str, key_id: str) -> dict | None:
        return self.keys.find_one({"workspace": slug, "keyId": key_id})

    def key_by_id(self, key_id: str) -> dict | None:
        return self.keys.find_one({"keyId": key_id})

    def live_keys_made_by(self, slug: str, maker: str, at: datetime) -> list[dict]:
        return list(self.keys.find({"workspace": slug, "madeBy": maker, "revokedAt": None,
                                    "$or": [{"expiresAt": None}, {"expiresAt": {"$gt": at}}]}))

    def count_live_keys(self, slug: str, grants: bool, at: datetime) -> int:
        """Unrevoked keys of the workspace: grants unexpired at ``at``, or long-lived ones."""
        expiry = {"$gt": at} if grants else None
        return self.keys.count_documents({"workspace": slug, "expiresAt": expiry, "revokedAt": None})

    def revoke_with_derived(self, slug: str, key_id: str, at: datetime, event: Insert | None = None) -> None:
        """Mark the key, the keys derived from it and theirs, revoked at ``at`` (each that is
        not revoked already keeps its first time), in one transaction with ``event`` (its
        ``api_key.revoked``) if this revokes the key: revoking it again reports nothing."""

        def work(session):
            found, frontier = [key_id], [key_id]
            while frontier:
                children = self.keys.find({"workspace": slug, "parentKeyId": {"$in": frontier}}, projection={"keyId": 1}, session=session)
                frontier = [c["keyId"] for c in children if c["keyId"] not in found]
                found += frontier
            live = {"workspace": slug, "revokedAt": None}
            revoked = self.keys.update_one({**live, "keyId": key_id}, {"$set": {"revokedAt": at}}, session=session).modified_count
            self.keys.update_many({**live, "keyId": {"$in": found}}, {"$set": {"revokedAt": at}}, session=session)
            if event is not None and revoked:
                event.apply(session)

        self.transaction(work)

    # -- changelogs -------------------------------------------------------------------------

    @staticmethod
    def new_changelog(**fields) -> dict:
        return new_document(Changelog, id=ObjectId(), **fields)

    def add_changelog(self, doc: dict, event: Insert | None) -> None:
        """A new changelog entry and, when it is published at once, its event."""
        self._insert_all([Insert(self.changelogs, doc), event])

    def find_changelog(self, slug: str, oid: ObjectId) -> dict | None:
        return self.changelogs.find_one({"_id": oid, "workspace": slug})

    def update_changelog(self, session: ClientSession, slug: str, oid: ObjectId, guard: dict, change: dict) -> dict | None:
        """Set ``change`` on the entry if it also matches ``guard``; the entry after, or None."""
        return self.changelogs.find_one_and_update(
            {"_id": oid, "workspace": slug, **guard}, {"$set": change}, return_document=ReturnDocument.AFTER, session=session
        )

    def changelog_page(self, slug: str, drafts: bool, limit: int, offset: int) -> list[dict]:
        """Entries newest first: every entry by creation when ``drafts``, else the published
        ones by publication (each order has its index)."""
        if drafts:
            query, order = {"workspace": slug}, [("createdAt", -1), ("_id", -1)]
        else:
            query, order = {"workspace": slug, "publishedAt": {"$ne": None}}, [("publishedAt", -1), ("_id", -1)]
        return list(self.changelogs.find(query, sort=order, skip=offset, limit=limit))
