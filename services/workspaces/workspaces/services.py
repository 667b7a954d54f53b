"""The workspaces service's logic. Resources validate input and call these methods.

Every change to a workspace bumps its ``version`` and writes a ``workspace.updated``
snapshot to the outbox in the same transaction, so other services' read models can
never miss a change or apply an old one over a newer one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import jwt
from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from common import auth
from common.errors import BadRequest, Conflict, NotFound, Unauthorized
from common.events import Outbox
from common.ids import new_id, now, object_id
from workspaces import contract, shapes
from workspaces.models import ApiKey, Changelog, Workspace

KEY_PREFIX = "fbk_"


def hash_key(key: str) -> str:
    # API keys carry 192 random bits, so a fast hash is enough (nothing to brute-force).
    return hashlib.sha256(key.encode()).hexdigest()


class WorkspaceService:
    def __init__(self, store, post_directory):
        self.store = store
        self.outbox = Outbox(store.db, contract.TOPIC)
        self.workspaces = Workspace._get_collection()
        self.keys = ApiKey._get_collection()
        self.changelogs = Changelog._get_collection()
        self.posts = post_directory

    # -- workspaces ------------------------------------------------------------------

    def get(self, slug: str) -> dict:
        doc = self.workspaces.find_one({"_id": slug})
        if doc is None:
            raise NotFound(f"workspace '{slug}' not found")
        return doc

    def create(self, slug: str, name: str) -> tuple[dict, str]:
        """Create a workspace with default statuses and its first manager key."""
        created = now()
        doc = Workspace(
            slug=slug,
            name=name,
            statuses=[{"slug": s, "name": n, "color": c, "roadmap": r} for s, n, c, r in contract.DEFAULT_STATUSES],
            createdAt=created,
        ).to_mongo().to_dict()
        key, key_doc = self._new_key(slug, "Default manager key", created)

        def work(session):
            self.workspaces.insert_one(doc, session=session)
            self.keys.insert_one(key_doc, session=session)
            self.outbox.add(session, contract.WORKSPACE_CREATED, slug, shapes.snapshot(doc))

        try:
            self.store.transaction(work)
        except DuplicateKeyError:
            raise Conflict(f"workspace '{slug}' already exists") from None
        return doc, key

    def update(self, slug: str, filter_extra: dict, change: dict, missing: Exception | None = None) -> dict:
        """Apply ``change`` to the workspace and publish its new snapshot, atomically.

        ``filter_extra`` guards the change (e.g. a board slug not taken yet); when it does
        not match an existing workspace, ``missing`` is raised.
        """
        change = {**change, "$inc": {**change.get("$inc", {}), "version": 1}}

        def work(session):
            doc = self.workspaces.find_one_and_update(
                {"_id": slug, **filter_extra}, change, return_document=ReturnDocument.AFTER, session=session
            )
            if doc is None:
                self.get(slug)  # 404 for an unknown workspace
                raise missing or NotFound(f"workspace '{slug}' not found")
            self.outbox.add(session, contract.WORKSPACE_UPDATED, slug, shapes.snapshot(doc))
            return doc

        return self.store.transaction(work)

    def update_workspace(self, slug: str, fields: dict) -> dict:
        return self.update(slug, {}, {"$set": fields}) if fields else self.get(slug)

    def update_settings(self, slug: str, fields: dict) -> dict:
        if not fields:
            return self.get(slug)
        return self.update(slug, {}, {"$set": {f"settings.{k}": v for k, v in fields.items()}})

    def set_custom_domain(self, slug: str, domain: str | None) -> None:
        """Apply a domain event (read model of the domains service's verified domain)."""
        if self.workspaces.find_one({"_id": slug}, projection={"_id": 1}) is None:
            return
        self.update(slug, {}, {"$set": {"customDomain": domain}})

    # -- boards and statuses ------------------------------------------------------------

    def add_board(self, slug: str, board_slug: str, name: str) -> dict:
        board = {"id": new_id(), "slug": board_slug, "name": name, "createdAt": now()}
        self.update(
            slug,
            {"boards.slug": {"$ne": board_slug}},
            {"$push": {"boards": board}},
            Conflict(f"board '{board_slug}' already exists"),
        )
        return board

    def add_status(self, slug: str, fields: dict) -> dict:
        status = {k: fields[k] for k in ("slug", "name", "color")} | {"roadmap": fields.get("roadmap", True)}
        push = {"$each": [status]}
        if "order" in fields:
            push["$position"] = int(fields["order"])  # JSON Schema's integer admits 3.0
        doc = self.update(
            slug,
            {"statuses.slug": {"$ne": status["slug"]}},
            {"$push": {"statuses": push}},
            Conflict(f"status '{status['slug']}' already exists"),
        )
        return self._status_of(doc, status["slug"])

    def update_status(self, slug: str, status_slug: str, fields: dict) -> dict:
        doc = self.get(slug)
        statuses = doc.get("statuses", [])
        index = next((i for i, s in enumerate(statuses) if s["slug"] == status_slug), None)
        if index is None:
            raise NotFound(f"status '{status_slug}' not found")
        status = {**statuses[index], **{k: v for k, v in fields.items() if k != "order"}}
        reordered = [s for s in statuses if s["slug"] != status_slug]
        reordered.insert(int(fields.get("order", index)), status)
        # Guard on the version read, so two concurrent edits cannot lose one another.
        doc = self.update(
            slug, {"version": doc["version"]}, {"$set": {"statuses": reordered}}, Conflict("statuses changed meanwhile; retry")
        )
        return self._status_of(doc, status_slug)

    @staticmethod
    def _status_of(doc: dict, status_slug: str) -> dict:
        for i, s in enumerate(doc["statuses"]):
            if s["slug"] == status_slug:
                return shapes.status_detail(s, i)
        raise NotFound(f"status '{status_slug}' not found")

    # -- API keys and identity ------------------------------------------------------------

    def _new_key(self, slug: str, name: str, created) -> tuple[str, dict]:
        key_id = secrets.token_hex(8)
        key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(24)}"
        doc = ApiKey(
            keyId=key_id, workspace=slug, name=name, role="manager", hash=hash_key(key), prefix=key[:12], createdAt=created
        ).to_mongo().to_dict()
        return key, doc

    def create_key(self, slug: str, name: str) -> tuple[dict, str]:
        self.get(slug)
        key, doc = self._new_key(slug, name, now())
        self.keys.insert_one(doc)
        return doc, key

    def list_keys(self, slug: str) -> list[dict]:
        self.get(slug)
        return list(self.keys.find({"workspace": slug}, sort=[("createdAt", 1)]))

    def revoke_key(self, slug: str, key_id: str) -> dict:
        doc = self.keys.find_one_and_update(
            {"workspace": slug, "keyId": key_id, "revokedAt": None},
            {"$set": {"revokedAt": now()}},
            return_document=ReturnDocument.AFTER,
        ) or self.keys.find_one({"workspace": slug, "keyId": key_id})  # revoking twice keeps the first time
        if doc is None:
            raise NotFound(f"API key '{key_id}' not found")
        return doc

    def identify(self, slug: str, api_key: str | None, user_token: str | None) -> auth.Caller:
        """Who presents these credentials on workspace ``slug`` (the gateway asks)."""
        if api_key:
            return self._manager(api_key)
        workspace = self.get(slug)
        secret = workspace.get("settings", {}).get("ssoSecret")
        if not secret:
            raise Unauthorized("this workspace does not accept user tokens (no ssoSecret is set)")
        try:
            claims = jwt.decode(user_token, secret, algorithms=["HS256"], options={"require": []})
        except jwt.InvalidTokenError as ex:
            raise Unauthorized(f"invalid user token: {ex}") from None
        user = claims.get("id") or claims.get("email")
        if not isinstance(user, (str, int)) or user == "":
            raise Unauthorized("invalid user token: it must carry an 'id' or 'email' claim")
        return auth.Caller(
            kind=auth.USER,
            workspace=slug,
            user_id=f"sso:{user}",
            name=_str_claim(claims, "name"),
            email=_str_claim(claims, "email"),
            avatar_url=_str_claim(claims, "avatarURL"),
        )

    def _manager(self, api_key: str) -> auth.Caller:
        key_id = api_key[len(KEY_PREFIX) :].split("_", 1)[0] if api_key.startswith(KEY_PREFIX) else None
        doc = self.keys.find_one({"keyId": key_id}) if key_id else None
        if doc is None or not hmac.compare_digest(doc["hash"], hash_key(api_key)):
            raise Unauthorized("invalid API key")
        if doc.get("revokedAt") is not None:
            raise Unauthorized("this API key has been revoked")
        return auth.Caller(kind=auth.MANAGER, workspace=doc["workspace"], key_id=doc["keyId"], name=doc["name"])

    # -- changelogs ------------------------------------------------------------------

    def create_changelog(self, slug: str, fields: dict) -> dict:
        self.get(slug)
        post_ids = self._checked_post_ids(slug, fields.get("postIds", []))
        created = now()
        doc = {
            "_id": ObjectId(),
            "workspace": slug,
            "title": fields["title"],
            "slug": fields["slug"],
            "content": fields["content"],
            "postIds": post_ids,
            "publishedAt": created if fields.get("publish") else None,
            "createdAt": created,
        }

        def work(session):
            self.changelogs.insert_one(doc, session=session)
            if doc["publishedAt"] is not None:
                self.outbox.add(session, contract.CHANGELOG_PUBLISHED, slug, shapes.changelog(doc))

        try:
            self.store.transaction(work)
        except DuplicateKeyError:
            raise Conflict(f"a changelog entry with slug '{fields['slug']}' already exists") from None
        return doc

    def update_changelog(self, slug: str, changelog_id: str, fields: dict) -> dict:
        oid = object_id(changelog_id, "changelog entry")
        current = self.get_changelog(slug, changelog_id, drafts=True)
        change = {k: fields[k] for k in ("title", "content") if k in fields}
        if "postIds" in fields:
            change["postIds"] = self._checked_post_ids(slug, fields["postIds"])
        publish = fields.get("publish")
        if publish is False and current.get("publishedAt") is not None:
            raise Conflict("a published changelog entry cannot be unpublished")
        publishing = publish is True and current.get("publishedAt") is None
        if publishing:
            change["publishedAt"] = now()
        if not change:
            return current

        def work(session):
            # publishedAt is set once: the filter refuses a second publisher of the same draft.
            guard = {"publishedAt": None} if publishing else {}
            doc = self.changelogs.find_one_and_update(
                {"_id": oid, "workspace": slug, **guard}, {"$set": change}, return_document=ReturnDocument.AFTER, session=session
            )
            if doc is None:
                raise Conflict("the changelog entry was published meanwhile; retry")
            if publishing:
                self.outbox.add(session, contract.CHANGELOG_PUBLISHED, slug, shapes.changelog(doc))
            return doc

        return self.store.transaction(work)

    def get_changelog(self, slug: str, changelog_id: str, drafts: bool) -> dict:
        self.get(slug)
        doc = self.changelogs.find_one({"_id": object_id(changelog_id, "changelog entry"), "workspace": slug})
        if doc is None or (doc.get("publishedAt") is None and not drafts):
            raise NotFound(f"changelog entry '{changelog_id}' not found")
        return doc

    def list_changelogs(self, slug: str, drafts: bool, limit: int, offset: int) -> list[dict]:
        self.get(slug)
        return self._changelogs(slug, drafts, limit, offset)

    def _changelogs(self, slug: str, drafts: bool, limit: int, offset: int) -> list[dict]:
        if drafts:
            query, order = {"workspace": slug}, [("createdAt", -1), ("_id", -1)]
        else:
            query, order = {"workspace": slug, "publishedAt": {"$ne": None}}, [("publishedAt", -1), ("_id", -1)]
        return list(self.changelogs.find(query, sort=order, skip=offset, limit=limit))

    def _checked_post_ids(self, slug: str, post_ids: list[str]) -> list[str]:
        post_ids = list(dict.fromkeys(post_ids))
        unknown = self.posts.unknown(slug, post_ids) if post_ids else []
        if unknown:
            raise BadRequest(f"postIds contains unknown post(s) of this workspace: {', '.join(unknown)}")
        return post_ids

    # -- agent context ------------------------------------------------------------------

    def agent_context(self, slug: str) -> dict:
        doc = self.get(slug)
        recent = self._changelogs(slug, drafts=False, limit=contract.AGENT_CONTEXT_CHANGELOGS, offset=0)
        return {
            "workspace": {"slug": doc["_id"], "name": doc["name"]},
            "brandVoice": doc.get("settings", {}).get("brandVoice", ""),
            "boards": [shapes.board(b) for b in doc.get("boards", [])],
            "statuses": [shapes.status(s) for s in doc.get("statuses", [])],
            "recentChangelogs": [{"title": c["title"], "content": c["content"]} for c in recent],
        }


def _str_claim(claims: dict, name: str) -> str | None:
    value = claims.get(name)
    return str(value)[:200] if value is not None else None

