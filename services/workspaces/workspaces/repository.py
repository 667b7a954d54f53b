"""Every database command and outbox write of the workspaces service.

The service layer decides; this module knows where things are stored. A change others
should hear of commits in one unit of work with its outbox event (:meth:`unit_of_work`, whose
``tx`` runs the commands below in its transaction). Boards and statuses live inside their
workspace document (:mod:`workspaces.models`), so each change to a workspace is one atomic
update, which bumps its ``version`` and returns the document its snapshot event is built from.

The SSO secret is stored sealed (:mod:`common.secretbox`): :meth:`change_settings` seals it,
:meth:`sso_secret` reads it back. API keys are stored as their hash only.
"""

from __future__ import annotations

from datetime import datetime

from bson import ObjectId
from common.db import Delete, Insert, Store, Update, new_document
from common.repository import Repository
from common.secretbox import SecretBox
from pymongo import ReturnDocument

from workspaces import contract
from workspaces.models import ApiKey, Board, Changelog, Logo, Status, Workspace


class WorkspaceRepository(Repository):
    def __init__(self, store: Store, box: SecretBox):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.box = box
        self.workspaces = store.collection(Workspace)
        self.keys = store.collection(ApiKey)
        self.changelogs = store.collection(Changelog)
        self.logos = store.collection(Logo)

    # -- units of work ----------------------------------------------------------------------

    def _insert_all(self, writes: list[Insert | None]) -> None:
        """Insert new documents (and their event) in one unit of work; a duplicate key raises
        DuplicateKeyError and nothing is written."""
        self.unit_of_work(lambda tx: tx.add(*(w for w in writes if w is not None)))

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
        return self.workspaces.find_one({"_id": slug}, session=self.session)

    def workspace_exists(self, slug: str) -> bool:
        return self.workspaces.find_one({"_id": slug}, projection={"_id": 1}) is not None

    def add_workspace(self, doc: dict, key: dict, events: list[Insert]) -> None:
        """A new workspace, its first API key and their events, together."""
        self._insert_all([Insert(self.workspaces, doc), Insert(self.keys, key), *events])

    def sso_secret(self, doc: dict) -> str | None:
        """The workspace's SSO secret in clear (stored sealed, or in clear from before sealing)."""
        return self.box.open(doc.get("settings", {}).get("ssoSecret"))

    # Each change below answers the workspace as changed, or None when it is not there or the
    # change's condition did not hold.

    def update_workspace(self, slug: str, fields: dict) -> dict | None:
        """Set the workspace's own fields (its name, its logo)."""
        return self._change(slug, {}, {"$set": fields})

    def change_settings(self, slug: str, settings: dict) -> dict | None:
        """Set these of the workspace's settings, sealing an ``ssoSecret``."""
        if settings.get("ssoSecret") is not None:
            settings = {**settings, "ssoSecret": self.box.seal(settings["ssoSecret"])}
        return self._change(slug, {}, {"$set": {f"settings.{k}": v for k, v in settings.items()}})

    def find_logo(self, slug: str) -> dict | None:
        return self.logos.find_one({"_id": slug}, session=self.session)

    def set_logo(self, slug: str, logo: dict | None, url: str | None) -> dict | None:
        """Keep ``logo`` (its ``contentType``, ``data``, ``hash``, ``updatedAt``) as the workspace's
        uploaded one, or none (None), and make ``url`` the workspace's logo: in this unit of work."""
        if logo is None:
            self.drop_logo(slug)
        else:
            self.add(Update(self.logos, {"_id": slug}, {"$set": logo}, upsert=True))
        return self.update_workspace(slug, {"logo": url})

    def drop_logo(self, slug: str) -> None:
        """Forget the uploaded logo, in this unit of work."""
        self.add(Delete(self.logos, {"_id": slug}))

    def set_custom_domain(self, slug: str, domain: str | None) -> dict | None:
        return self._change(slug, {}, {"$set": {"customDomain": domain}})

    def add_board(self, slug: str, board: dict) -> dict | None:
        """Add ``board`` unless a board of its slug exists."""
        return self._change(slug, {"boards.slug": {"$ne": board["slug"]}}, {"$push": {"boards": board}})

    def replace_boards(self, slug: str, boards: list[dict], version: int) -> dict | None:
        """Make ``boards`` the workspace's, if it is still at ``version`` (what they were made from)."""
        return self._change(slug, {"version": version}, {"$set": {"boards": boards}})

    def remove_board(self, slug: str, board_id: str) -> dict | None:
        """Remove the board ``board_id`` if it is there."""
        return self._change(slug, {"boards.id": board_id}, {"$pull": {"boards": {"id": board_id}}})

    def add_status(self, slug: str, status: dict, position: int | None) -> dict | None:
        """Add ``status`` at ``position`` (None: last) unless a status of its slug exists."""
        push: dict = {"$each": [status]}
        if position is not None:
            push["$position"] = position
        return self._change(slug, {"statuses.slug": {"$ne": status["slug"]}}, {"$push": {"statuses": push}})

    def replace_statuses(self, slug: str, statuses: list[dict], version: int) -> dict | None:
        """Make ``statuses`` the workspace's, if it is still at ``version`` (what they were made from)."""
        return self._change(slug, {"version": version}, {"$set": {"statuses": statuses}})

    def _change(self, slug: str, guard: dict, change: dict) -> dict | None:
        return self.workspaces.find_one_and_update(
            {"_id": slug, **guard}, {**change, "$inc": {"version": 1}}, return_document=ReturnDocument.AFTER,
            session=self.session,
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

    def mark_key_used(self, key_id: str, at: datetime, before: datetime) -> None:
        """Set the key's ``lastUsedAt`` to ``at`` unless it is ``before`` or later already (one
        conditional update: concurrent checks of the key write it once)."""
        self.keys.update_one({"keyId": key_id, "$or": [{"lastUsedAt": None}, {"lastUsedAt": {"$lt": before}}]},
                             {"$set": {"lastUsedAt": at}})

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

        def work(tx: WorkspaceRepository) -> None:
            family = tx._family(slug, key_id)
            live, revoke = {"workspace": slug, "revokedAt": None}, {"$set": {"revokedAt": at}}
            tx.add(Update(tx.keys, {**live, "keyId": key_id}, revoke))
            (revoked,) = tx.flush()  # whether the key was live decides whether there is an event
            tx.add(Update(tx.keys, {**live, "keyId": {"$in": family}}, revoke, many=True))
            if event is not None and revoked:
                tx.add(event)

        self.unit_of_work(work)

    def _family(self, slug: str, key_id: str) -> list[str]:
        """The ids of the key, the keys derived from it and theirs."""
        found, frontier = [key_id], [key_id]
        while frontier:
            children = self.keys.find({"workspace": slug, "parentKeyId": {"$in": frontier}}, projection={"keyId": 1},
                                      session=self.session)
            frontier = [c["keyId"] for c in children if c["keyId"] not in found]
            found += frontier
        return found

    # -- changelogs -------------------------------------------------------------------------

    @staticmethod
    def new_changelog(**fields) -> dict:
        return new_document(Changelog, id=ObjectId(), **fields)

    def add_changelog(self, doc: dict, event: Insert | None) -> None:
        """A new changelog entry and, when it is published at once, its event."""
        self._insert_all([Insert(self.changelogs, doc), event])

    def find_changelog(self, slug: str, oid: ObjectId) -> dict | None:
        return self.changelogs.find_one({"_id": oid, "workspace": slug})

    def update_changelog(self, slug: str, oid: ObjectId, change: dict, draft_only: bool) -> dict | None:
        """Set ``change`` on the entry (with ``draft_only``, only while it is unpublished); the
        entry after, or None when it is not there or no longer a draft."""
        guard = {"publishedAt": None} if draft_only else {}
        return self.changelogs.find_one_and_update(
            {"_id": oid, "workspace": slug, **guard}, {"$set": change}, return_document=ReturnDocument.AFTER,
            session=self.session,
        )

    def changelogs_after(self, slug: str, after: ObjectId | None, limit: int) -> list[dict]:
        """Up to ``limit`` entries, drafts too, in id order after ``after`` (an export's page)."""
        query = {"workspace": slug, **({"_id": {"$gt": after}} if after else {})}
        return list(self.changelogs.find(query, sort=[("_id", 1)], limit=limit))

    def changelog_page(self, slug: str, drafts: bool, limit: int, offset: int) -> list[dict]:
        """Entries newest first: every entry by creation when ``drafts``, else the published
        ones by publication (each order has its index)."""
        if drafts:
            query, order = {"workspace": slug}, [("createdAt", -1), ("_id", -1)]
        else:
            query, order = {"workspace": slug, "publishedAt": {"$ne": None}}, [("publishedAt", -1), ("_id", -1)]
        return list(self.changelogs.find(query, sort=order, skip=offset, limit=limit))
