"""The workspaces service's rules: workspaces, settings, boards, statuses, API keys, changelogs.

Every permission check of the service happens here, once, before the request body is
validated (a caller without the right learns nothing from validation). Each method returns
the response shape. Database commands are the repository's.

Who may do what:
- the operator (``auth.ADMIN``) alone creates workspaces, and acts as a manager of any;
- managers of a workspace make every change to it, and alone read its settings (they hold
  the SSO secret, chosen or generated), its API keys, its agent context and its changelog drafts;
- any API key of a workspace creates keys derived from it (``parentKeyId``), of a role no
  higher than its own and expiring no later than it does, and revokes itself; revoking a key
  revokes the keys derived from it;
- a key made by a team member's session carries that member as its maker (``madeBy``, and so
  do the keys derived from it): the people service lets it act only while the maker is on the
  team and never beyond the maker's role, and a member who leaves takes their keys along
  (``revoke_keys_made_by``, on the people service's ``member.removed``);
- everyone, anonymous callers too, reads a workspace, its branding, boards, statuses and
  published changelog entries (a draft is a 404 to them).

Every change to a workspace bumps its ``version`` and writes a ``workspace.updated``
snapshot to the outbox in the same transaction, so other services' read models can never
miss a change or apply an old one over a newer one. Snapshots carry no secrets.

What a caller does is reported with its ``actor`` (``common.auth.actor``), for the audit log
and webhooks: ``workspace.settings_changed`` (the names of what a manager changed: settings,
name, logo, boards, statuses; never values), ``api_key.created``, ``api_key.revoked`` and
``changelog.published``, each in the transaction of its change.
"""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timedelta, timezone
from typing import Callable

import jwt
from pymongo.errors import DuplicateKeyError

from common import auth
from common.claims import companies_claim
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.ids import new_id, now, object_id
from common.validation import check
from workspaces import api_keys, contract, logos, schemas, shapes
from common.directory import Posts
from workspaces.repository import WorkspaceRepository


class WorkspaceService:
    def __init__(self, repo: WorkspaceRepository, posts: Posts, public_base_url: str = ""):
        self.repo = repo
        self.posts = posts
        self.public_base_url = public_base_url.rstrip("/")  # where an uploaded logo is served

    # -- workspaces ---------------------------------------------------------------------------

    def create(self, caller: auth.Caller, body) -> dict:
        """Create a workspace with the default statuses and its first manager key (shown once)."""
        auth.require_admin(caller)
        fields = check(body, schemas.CREATE_WORKSPACE)
        slug, created = fields["slug"], now()
        doc = self.repo.new_workspace(
            slug=slug,
            name=fields["name"],
            statuses=[self.repo.new_status(slug=s, name=n, color=c, roadmap=r, closed=x)
                      for s, n, c, r, x in contract.DEFAULT_STATUSES],
            createdAt=created,
        )
        key_doc, key = self._issue_key(slug, "Default manager key", contract.DEFAULT_KEY_ROLE, created, None, None,
                                       contract.OPERATOR)
        events = [
            self.repo.event(slug, contract.WORKSPACE_CREATED, shapes.snapshot(doc)),
            self.repo.event(slug, contract.API_KEY_CREATED, shapes.key_created(key_doc, caller)),
        ]
        try:
            self.repo.add_workspace(doc, key_doc, events)
        except DuplicateKeyError:
            raise Conflict(f"workspace '{slug}' already exists") from None
        return shapes.created_workspace(doc, key)

    def get(self, caller: auth.Caller, slug: str) -> dict:
        return shapes.workspace(self._workspace(slug))

    def update(self, caller: auth.Caller, slug: str, body) -> dict:
        """Rename the workspace or set its logo."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.UPDATE_WORKSPACE)
        if not fields:
            return shapes.workspace(self._workspace(slug))

        def change(tx: WorkspaceRepository) -> dict | None:
            if "logo" in fields:  # a logo elsewhere replaces an uploaded one, which goes
                tx.drop_logo(slug)
            return tx.update_workspace(slug, fields)

        doc = self._change(slug, change, changed=shapes.settings_changed(fields, caller))
        return shapes.workspace(doc)

    # -- the logo -----------------------------------------------------------------------------

    def logo(self, caller: auth.Caller, slug: str) -> dict:
        """The uploaded logo (public): ``contentType``, ``data``, ``hash``; 404 without one."""
        logo = self.repo.find_logo(slug)
        if logo is None:
            self._workspace(slug)
            raise NotFound(f"workspace '{slug}' has no uploaded logo")
        return logo

    def upload_logo(self, caller: auth.Caller, slug: str, content_type: str | None, body: Callable[[], bytes]) -> dict:
        """Make the image ``body()`` (checked by ``logos.checked``) the workspace's logo; the
        workspace, whose ``logo`` is where it is served, with its hash as ``?v=``."""
        auth.require_manager(caller, slug)
        self._workspace(slug)
        kind, data = logos.checked(content_type, body())
        digest = logos.digest(data)
        logo = {"contentType": kind, "data": data, "hash": digest, "updatedAt": now()}
        url = f"{self.public_base_url}/v1/workspaces/{slug}/logo?v={digest[:12]}"
        doc = self._change(slug, lambda tx: tx.set_logo(slug, logo, url), changed=shapes.settings_changed(["logo"], caller))
        return shapes.workspace(doc)

    def remove_logo(self, caller: auth.Caller, slug: str) -> dict:
        """No logo any more (uploaded or elsewhere): the workspace."""
        auth.require_manager(caller, slug)
        doc = self._workspace(slug)
        if doc.get("logo") is None and self.repo.find_logo(slug) is None:
            return shapes.workspace(doc)
        doc = self._change(slug, lambda tx: tx.set_logo(slug, None, None), changed=shapes.settings_changed(["logo"], caller))
        return shapes.workspace(doc)

    def settings(self, caller: auth.Caller, slug: str) -> dict:
        auth.require_manager(caller, slug)
        return self._settings(self._workspace(slug))

    def update_settings(self, caller: auth.Caller, slug: str, body) -> dict:
        auth.require_manager(caller, slug)
        body = body() if callable(body) else body  # a body handed over unparsed is parsed now, after the check
        if isinstance(body, dict) and "logo" in body:
            # Settings show the logo, but it belongs to the workspace: say where to set it.
            raise BadRequest("field 'logo' is read-only: set it with PATCH /v1/workspaces/{slug}")
        if isinstance(body, dict) and body.get("ssoSecret") == contract.SSO_SECRET_GENERATE:
            # Shorter than any chosen secret may be, so it can only mean this.
            body = {**body, "ssoSecret": secrets.token_urlsafe(contract.SSO_GENERATED_BYTES)}
        fields = check(body, schemas.SETTINGS)
        if not fields:
            return self._settings(self._workspace(slug))
        settings = dict(fields)
        if "defaultLocale" in fields or "locales" in fields:
            self._check_languages(self._workspace(slug), fields)
        if "ssoSecret" in fields:
            # A secret set from now on signs tokens that must name the workspace in ``aud``; those
            # set before keep the old rule (the flag is absent), so no integration breaks.
            settings["ssoRequireAud"] = fields["ssoSecret"] is not None
        doc = self._change(slug, lambda tx: tx.change_settings(slug, settings), changed=shapes.settings_changed(fields, caller))
        return self._settings(doc)

    @staticmethod
    def _check_languages(doc: dict, fields: dict) -> None:
        """The default language must be one of the enabled ones, as they will be after the change."""
        stored = shapes.languages(doc.get("settings", {}))
        default, enabled = fields.get("defaultLocale", stored["defaultLocale"]), fields.get("locales", stored["locales"])
        if default not in enabled:
            raise BadRequest(f"defaultLocale '{default}' must be one of the enabled locales",
                             errors=[{"field": "defaultLocale", "message": "must be one of locales", "code": "not_enabled"}], code="locale_not_enabled")

    def _settings(self, doc: dict) -> dict:
        return shapes.settings(doc, self.repo.sso_secret(doc))

    def branding(self, caller: auth.Caller, slug: str) -> dict:
        return shapes.branding(self._workspace(slug))

    def agent_context(self, caller: auth.Caller, slug: str) -> dict:
        """What the team's agents need to write in the workspace's voice (no secrets, no drafts)."""
        auth.require_manager(caller, slug)
        doc = self._workspace(slug)
        recent = self.repo.changelog_page(slug, drafts=False, limit=contract.AGENT_CONTEXT_CHANGELOGS, offset=0)
        return shapes.agent_context(doc, recent)

    def snapshot(self, slug: str) -> dict:
        """The workspace as its events carry it, for a read model that has not caught up (internal)."""
        return shapes.snapshot(self._workspace(slug))

    def set_custom_domain(self, slug: str, domain: str | None) -> None:
        """Keep the domains service's verified domain of ``slug`` (None: none is verified)."""
        if not self.repo.workspace_exists(slug):
            return  # a domain event of a workspace this deployment does not have
        self._change(slug, lambda tx: tx.set_custom_domain(slug, domain))

    def export(self, body) -> dict:
        """One page of ``kind`` of a workspace for its export (internal: the portability
        service asks): boards (archived ones too), statuses, changelog entries (drafts too,
        paged by id) or the settings without the SSO secret."""
        fields = check(body, schemas.EXPORT)
        slug, kind, limit = fields["workspace"], fields["kind"], fields.get("limit", 500)
        doc = self._workspace(slug)
        if kind == "changelogs":
            after = object_id(fields["after"]) if fields.get("after") else None
            entries = self.repo.changelogs_after(slug, after, limit)
            more = len(entries) == limit
            return {"items": [shapes.changelog(e) for e in entries], "next": str(entries[-1]["_id"]) if more else None}
        if kind == "boards":
            items = shapes.boards(doc, archived=True)
        elif kind == "statuses":
            items = [shapes.status_detail(s, i) for i, s in enumerate(doc.get("statuses", []))]
        else:
            items = [shapes.exported_settings(doc)]
        return {"items": items, "next": None}

    def _workspace(self, slug: str) -> dict:
        doc = self.repo.find_workspace(slug)
        if doc is None:
            raise NotFound(f"workspace '{slug}' not found")
        return doc

    def _change(self, slug: str, change: Callable[[WorkspaceRepository], dict | None], missing: Exception | None = None,
                changed: dict | None = None) -> dict:
        """Apply ``change(tx)`` (one of the repository's changes to a workspace) and publish the
        workspace's new snapshot, in one unit of work; with ``changed`` (a manager's change:
        ``shapes.settings_changed``), its ``workspace.settings_changed`` event too.

        When the workspace exists but the change's condition did not hold (e.g. a board slug
        not taken yet), ``missing`` is raised."""

        def work(tx: WorkspaceRepository) -> dict:
            doc = change(tx)
            if doc is None:
                if missing is None or tx.find_workspace(slug) is None:
                    raise NotFound(f"workspace '{slug}' not found")
                raise missing
            tx.add(tx.event(slug, contract.WORKSPACE_UPDATED, shapes.snapshot(doc)))
            if changed is not None:
                tx.add(tx.event(slug, contract.WORKSPACE_SETTINGS_CHANGED, changed))
            return doc

        return self.repo.unit_of_work(work)

    # -- boards and statuses ------------------------------------------------------------------

    def boards(self, caller: auth.Caller, slug: str, archived: bool = False) -> dict:
        """The boards open to posts, in their order; with ``archived`` (the team only), every board."""
        if archived and not caller.is_manager_of(slug):
            raise Forbidden("only the workspace's team lists archived boards (archived=true)")
        return {"items": shapes.boards(self._workspace(slug), archived)}

    def add_board(self, caller: auth.Caller, slug: str, body) -> dict:
        """Add a board at the end of the list."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.CREATE_BOARD)
        board = self.repo.new_board(id=new_id(), slug=fields["slug"], name=fields["name"],
                                    description=fields.get("description", ""), createdAt=now())
        doc = self._change(
            slug,
            lambda tx: tx.add_board(slug, board),
            Conflict(f"board '{board['slug']}' already exists"),
            shapes.settings_changed(["boards"], caller),
        )
        return _board_of(doc, board["id"])

    def update_board(self, caller: auth.Caller, slug: str, board_id: str, body) -> dict:
        """Rename, describe, move (``position``), archive or unarchive a board."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.UPDATE_BOARD)
        doc = self._workspace(slug)
        reordered = _edited(doc.get("boards", []), "id", board_id, fields, "position", "board")
        version = doc["version"]  # guarded, so two concurrent edits cannot lose one another
        doc = self._change(
            slug, lambda tx: tx.replace_boards(slug, reordered, version), Conflict("boards changed meanwhile; retry"),
            shapes.settings_changed(["boards"], caller),
        )
        return _board_of(doc, board_id)

    def delete_board(self, caller: auth.Caller, slug: str, board_id: str) -> dict:
        """Delete a board that has no post (409 otherwise: archive it). The posts service says
        whether it has any, merged and unapproved posts included."""
        auth.require_manager(caller, slug)
        doc = self._workspace(slug)
        board = next((b for b in doc.get("boards", []) if b["id"] == board_id), None)
        if board is None:
            raise NotFound(f"board '{board_id}' not found")
        if self.posts.in_use(slug, board_id=board_id):
            raise Conflict(f"board '{board['slug']}' has posts, and a board with posts is never deleted: "
                           "archive it instead (PATCH with \"archived\": true)")
        shown = _board_of(doc, board_id)
        self._change(slug, lambda tx: tx.remove_board(slug, board_id), NotFound(f"board '{board_id}' not found"),
                     shapes.settings_changed(["boards"], caller))
        return shown

    def statuses(self, caller: auth.Caller, slug: str) -> dict:
        statuses = self._workspace(slug).get("statuses", [])
        return {"items": [shapes.status_detail(s, i) for i, s in enumerate(statuses)]}

    def add_status(self, caller: auth.Caller, slug: str, body) -> dict:
        """Add a status at the end, or at position ``order``."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.CREATE_STATUS)
        status = self.repo.new_status(
            slug=fields["slug"], name=fields["name"], color=fields["color"], roadmap=fields.get("roadmap", True),
            closed=fields.get("closed", False),
        )
        position = int(fields["order"]) if "order" in fields else None  # JSON Schema's integer admits 3.0
        doc = self._change(
            slug,
            lambda tx: tx.add_status(slug, status, position),
            Conflict(f"status '{status['slug']}' already exists"),
            shapes.settings_changed(["statuses"], caller),
        )
        return _status_of(doc, status["slug"])

    def update_status(self, caller: auth.Caller, slug: str, status_slug: str, body) -> dict:
        """Rename, recolour, show or hide on the roadmap, count as closed or not, or move (``order``) a status."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.UPDATE_STATUS)
        doc = self._workspace(slug)
        reordered = _edited(doc.get("statuses", []), "slug", status_slug, fields, "order", "status")
        # Guard on the version read, so two concurrent edits cannot lose one another.
        version = doc["version"]
        doc = self._change(
            slug, lambda tx: tx.replace_statuses(slug, reordered, version), Conflict("statuses changed meanwhile; retry"),
            shapes.settings_changed(["statuses"], caller),
        )
        return _status_of(doc, status_slug)

    def delete_status(self, caller: auth.Caller, slug: str, status_slug: str) -> dict:
        """Delete a status no post is in (409 otherwise: move them first), never the last one
        (a new post needs one)."""
        auth.require_manager(caller, slug)
        doc = self._workspace(slug)
        statuses = doc.get("statuses", [])
        if not any(s["slug"] == status_slug for s in statuses):
            raise NotFound(f"status '{status_slug}' not found")
        if len(statuses) == 1:
            raise Conflict(f"status '{status_slug}' is the workspace's last: new posts need one")
        if self.posts.in_use(slug, status=status_slug):
            raise Conflict(f"status '{status_slug}' is in use: move its posts to another status first")
        shown = _status_of(doc, status_slug)
        remaining = [s for s in statuses if s["slug"] != status_slug]
        version = doc["version"]
        self._change(slug, lambda tx: tx.replace_statuses(slug, remaining, version), Conflict("statuses changed meanwhile; retry"),
                     shapes.settings_changed(["statuses"], caller))
        return shown

    # -- API keys and identity ----------------------------------------------------------------

    def api_keys(self, caller: auth.Caller, slug: str) -> dict:
        auth.require_manager(caller, slug)
        self._workspace(slug)
        return {"items": [shapes.api_key(k) for k in self.repo.keys_of(slug)]}

    def create_key(self, caller: auth.Caller, slug: str, body) -> dict:
        """A new API key: the key itself is in this answer only.

        The operator's keys have no parent; a key's own keys are derived from it: a role no
        higher than its own, and an expiry no later than its own (a grant cannot outlive the
        grant it came from)."""
        parent_id = self._key_parent(caller, slug)
        fields = check(body, schemas.CREATE_API_KEY)
        self._workspace(slug)
        role, created = fields.get("role", contract.DEFAULT_KEY_ROLE), now()
        lifetime = fields.get("expiresInSeconds")
        expires = created + timedelta(seconds=int(lifetime)) if lifetime is not None else None
        made_by = contract.OPERATOR if caller.kind == auth.ADMIN else (caller.user_id or contract.UNKNOWN_MAKER)
        if parent_id is not None:
            parent = self._live_key(self.repo.find_key(slug, parent_id), created)
            made_by = self._maker_of(parent)  # a derived key carries no more than its parent's maker
            parent_role = parent.get("role", contract.DEFAULT_KEY_ROLE)
            if contract.KEY_ROLE_RANK[role] > contract.KEY_ROLE_RANK[parent_role]:
                raise Forbidden(f"a key of role '{parent_role}' cannot create a key of role '{role}' (a higher one)")
            if parent.get("expiresAt") is not None:
                parent_end = _aware(parent["expiresAt"])
                expires = parent_end if expires is None else min(expires, parent_end)
        self._check_key_cap(slug, expires is not None, created)
        doc, key = self._issue_key(slug, fields["name"], role, created, expires, parent_id, made_by)
        self.repo.add_key(doc, self.repo.event(slug, contract.API_KEY_CREATED, shapes.key_created(doc, caller)))
        if parent_id is not None and not _is_live(self.repo.find_key(slug, parent_id), now()):
            # The parent was revoked while this key was made: the new key goes with it.
            self.repo.revoke_with_derived(slug, doc["keyId"], now())
            raise Unauthorized("this API key has been revoked")
        return shapes.created_key(doc, key)

    def _key_parent(self, caller: auth.Caller, slug: str) -> str | None:
        """Who may create a key here: the operator or a team member's session (None: no parent
        key), or a key of this workspace, whatever its role (its id: the parent); 401/403 for
        anyone else."""
        if caller.kind == auth.ADMIN:
            return None
        if caller.key_id is not None and caller.workspace == slug:
            return caller.key_id
        auth.require_manager(caller, slug)
        return None

    def _maker_of(self, doc: dict) -> str:
        """Whose rights a stored key carries (``madeBy``). A key from before the field existed:
        a derived one has its parent's maker; a root one made with its workspace (the same
        instant) is the operator's first key; any other root one is of unknown making, which
        the people service treats as a member that is not an owner."""
        if doc.get("madeBy"):
            return doc["madeBy"]
        if doc.get("parentKeyId"):
            parent = self.repo.find_key(doc["workspace"], doc["parentKeyId"])
            return self._maker_of(parent) if parent is not None else contract.UNKNOWN_MAKER
        workspace = self.repo.find_workspace(doc["workspace"])
        if workspace is not None and _aware(workspace["createdAt"]) == _aware(doc["createdAt"]):
            return contract.OPERATOR
        return contract.UNKNOWN_MAKER

    def _check_key_cap(self, slug: str, grant: bool, at: datetime) -> None:
        cap = contract.MAX_LIVE_GRANTS if grant else contract.MAX_LONG_LIVED_KEYS
        if self.repo.count_live_keys(slug, grant, at) >= cap:
            what = "unexpired grants (keys with expiresInSeconds)" if grant else "long-lived API keys"
            raise Conflict(f"workspace '{slug}' has {cap} {what}, the most it may have; revoke some first")

    def revoke_key(self, caller: auth.Caller, slug: str, key_id: str) -> dict:
        """Revoke a key and every key derived from it (managers; any key may revoke itself)."""
        if not (caller.key_id == key_id and caller.workspace == slug):
            auth.require_manager(caller, slug)
        doc = self.repo.find_key(slug, key_id)
        if doc is None:
            raise NotFound(f"API key '{key_id}' not found")
        # Revoking twice keeps the first time, and reports only the first.
        event = self.repo.event(slug, contract.API_KEY_REVOKED, shapes.key_revoked(doc, caller))
        self.repo.revoke_with_derived(slug, key_id, now(), event)
        doc = self.repo.find_key(slug, key_id)
        if doc is None:  # expired and removed meanwhile
            raise NotFound(f"API key '{key_id}' not found")
        return shapes.api_key(doc)

    def current_key(self, caller: auth.Caller) -> dict:
        """The API key the caller presents: its workspace and role (any role may ask). An agent
        given only a key and the gateway's URL learns here where it works and what it may do."""
        if caller.key_id is None:
            raise Unauthorized("this request needs a workspace API key (Authorization: Bearer <key>)")
        return shapes.current_key(self._live_key(self.repo.find_key(caller.workspace, caller.key_id), now()))

    def _issue_key(self, slug: str, name: str, role: str, created, expires, parent_id: str | None,
                   made_by: str) -> tuple[dict, str]:
        """The one place API keys are made: the document to store and the key (shown once)."""
        key_id, key = api_keys.generate()
        doc = self.repo.new_key(
            keyId=key_id,
            workspace=slug,
            name=name,
            role=role,
            hash=api_keys.hash_key(key),
            prefix=key[: api_keys.SHOWN],
            createdAt=created,
            expiresAt=expires,
            parentKeyId=parent_id,
            madeBy=made_by,
        )
        return doc, key

    def revoke_keys_made_by(self, slug: str, person_user_id: str, actor: dict | None) -> int:
        """Revoke every live key a member made here, and the keys derived from them, when the
        member leaves the team (the people service's ``member.removed``). Safe to repeat."""
        at, revoked = now(), 0
        for doc in self.repo.live_keys_made_by(slug, person_user_id, at):
            event = self.repo.event(slug, contract.API_KEY_REVOKED, {"id": doc["keyId"], "name": doc["name"], "actor": actor})
            self.repo.revoke_with_derived(slug, doc["keyId"], at, event)
            revoked += 1
        return revoked

    @staticmethod
    def _live_key(doc: dict | None, at: datetime) -> dict:
        """``doc`` if it is a key that works at ``at``; 401 otherwise."""
        if doc is None or doc.get("revokedAt") is not None:
            raise Unauthorized("this API key has been revoked")
        if not _is_live(doc, at):
            raise Unauthorized("this API key has expired")
        return doc

    def identify(self, body) -> dict:
        """Who presents these credentials on a workspace (internal: the gateway asks).

        An API key names its own workspace; a user token is checked with the ``ssoSecret``
        of the workspace the request is for."""
        fields = check(body, schemas.IDENTITY)
        if fields.get("apiKey"):
            return shapes.caller(self._key_holder(fields["apiKey"]))
        if fields["workspace"] is None:
            raise Unauthorized("a user token is only valid on a workspace's routes")
        caller, companies = self._sso_user(fields["workspace"], fields.get("userToken"))
        # The companies the token says its user belongs to go to the people service with the
        # answer, which publishes them when they change (docs/services/companies.md).
        return {**shapes.caller(caller), **({"companies": companies} if companies is not None else {})}

    def _key_holder(self, api_key: str) -> auth.Caller:
        key_id = api_keys.key_id_of(api_key)
        doc = self.repo.key_by_id(key_id) if key_id else None
        if doc is None or not api_keys.matches(api_key, doc["hash"]):
            raise Unauthorized("invalid API key")
        at = now()
        self._live_key(doc, at)  # the TTL index removes an expired key, but not at once
        self._mark_used(doc, at)
        role = doc.get("role", contract.DEFAULT_KEY_ROLE)
        maker = self._maker_of(doc)
        key_maker = None if maker == contract.OPERATOR else maker
        if role == auth.MANAGER_KEY:
            return auth.Caller(kind=auth.MANAGER, workspace=doc["workspace"], key_id=doc["keyId"], name=doc["name"], role=role,
                               key_maker=key_maker)
        # A scoped key is an identified end user of its workspace: it sees what any visitor may
        # (no secrets, hidden posts or private comments), and writes, if at all, as itself.
        return auth.Caller(
            kind=auth.USER, workspace=doc["workspace"], user_id=f"agent:{doc['keyId']}", name=doc["name"],
            key_id=doc["keyId"], role=role, key_maker=key_maker,
        )

    def _mark_used(self, doc: dict, at: datetime) -> None:
        """Record that the key was used, to the minute: no write while the stored time is
        recent (most checks), else one conditional update."""
        before = at - timedelta(seconds=contract.KEY_LAST_USED_PRECISION)
        last = doc.get("lastUsedAt")
        if last is None or _aware(last) < before:
            self.repo.mark_key_used(doc["keyId"], at, before)

    def _sso_user(self, slug: str, user_token: str | None) -> tuple[auth.Caller, list[dict] | None]:
        doc = self._workspace(slug)
        secret = self.repo.sso_secret(doc)
        if not secret:
            raise Unauthorized("this workspace does not accept user tokens (no ssoSecret is set)")
        try:
            # ``aud`` is checked below: required for secrets set since it is, else optional, and
            # when present it must name this workspace.
            claims = jwt.decode(
                user_token, secret, algorithms=["HS256"], leeway=contract.SSO_CLOCK_LEEWAY,
                options={"require": ["exp"], "verify_aud": False},
            )
        except jwt.InvalidTokenError as ex:
            raise Unauthorized(f"invalid user token: {ex}") from None
        if claims["exp"] - time.time() > contract.SSO_MAX_LIFETIME + contract.SSO_CLOCK_LEEWAY:
            raise Unauthorized(f"invalid user token: it must expire within {contract.SSO_MAX_LIFETIME // 3600} hours ('exp')")
        audience = claims.get("aud")
        if audience is None and doc.get("settings", {}).get("ssoRequireAud"):
            raise Unauthorized(f"invalid user token: it must name workspace '{slug}' in its audience ('aud')")
        if audience is not None and slug not in (audience if isinstance(audience, list) else [audience]):
            raise Unauthorized(f"invalid user token: its audience ('aud') is not workspace '{slug}'")
        user = claims.get("id") or claims.get("email")
        if not isinstance(user, (str, int)) or user == "":
            raise Unauthorized("invalid user token: it must carry an 'id' or 'email' claim")
        try:
            companies = companies_claim(claims)
        except BadRequest as ex:
            # Validation speaks of a request body and its fields; here they are the claim's.
            problem = ex.message.replace("request body", "the claim").replace("field '", "field 'companies.")
            raise Unauthorized(f"invalid user token: a malformed 'companies' claim: {problem}") from None
        return auth.Caller(
            kind=auth.USER,
            workspace=slug,
            user_id=f"sso:{user}",
            name=_str_claim(claims, "name"),
            email=_str_claim(claims, "email"),
            avatar_url=_str_claim(claims, "avatarURL"),
        ), companies

    # -- changelogs ---------------------------------------------------------------------------

    def changelogs(self, caller: auth.Caller, slug: str, limit: int, offset: int) -> dict:
        """Entries newest first: managers see drafts too, everyone else the published ones."""
        self._workspace(slug)
        docs = self.repo.changelog_page(slug, caller.is_manager_of(slug), limit, offset)
        return {"items": [shapes.changelog(c) for c in docs]}

    def changelog(self, caller: auth.Caller, slug: str, changelog_id: str) -> dict:
        return shapes.changelog(self._changelog(slug, changelog_id, drafts=caller.is_manager_of(slug)))

    def create_changelog(self, caller: auth.Caller, slug: str, body) -> dict:
        """A draft, or a published entry (``publish: true``) with its ``changelog.published`` event."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.CREATE_CHANGELOG)
        self._workspace(slug)
        post_ids = self._checked_post_ids(slug, fields.get("postIds", []))
        created = now()
        doc = self.repo.new_changelog(
            workspace=slug,
            title=fields["title"],
            slug=fields["slug"],
            content=fields["content"],
            postIds=post_ids,
            publishedAt=created if fields.get("publish") else None,
            createdAt=created,
        )
        published = doc["publishedAt"] is not None
        event = self.repo.event(slug, contract.CHANGELOG_PUBLISHED, shapes.changelog_published(doc, caller)) if published else None
        try:
            self.repo.add_changelog(doc, event)
        except DuplicateKeyError:
            raise Conflict(f"a changelog entry with slug '{fields['slug']}' already exists") from None
        return shapes.changelog(doc)

    def update_changelog(self, caller: auth.Caller, slug: str, changelog_id: str, body) -> dict:
        """Edit an entry, or publish a draft (once: an entry is never unpublished)."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.UPDATE_CHANGELOG)
        oid = object_id(changelog_id, "changelog entry")
        current = self._changelog(slug, changelog_id, drafts=True)
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
            return shapes.changelog(current)

        def work(tx: WorkspaceRepository) -> dict:
            # publishedAt is set once: only a draft takes it, so a second publisher finds none.
            doc = tx.update_changelog(slug, oid, change, draft_only=publishing)
            if doc is None:
                raise Conflict("the changelog entry was published meanwhile; retry")
            if publishing:
                tx.add(tx.event(slug, contract.CHANGELOG_PUBLISHED, shapes.changelog_published(doc, caller)))
            return doc

        return shapes.changelog(self.repo.unit_of_work(work))

    def _changelog(self, slug: str, changelog_id: str, drafts: bool) -> dict:
        self._workspace(slug)
        doc = self.repo.find_changelog(slug, object_id(changelog_id, "changelog entry"))
        if doc is None or (doc.get("publishedAt") is None and not drafts):
            raise NotFound(f"changelog entry '{changelog_id}' not found")
        return doc

    def _checked_post_ids(self, slug: str, post_ids: list[str]) -> list[str]:
        """``post_ids`` without repeats, once the posts service knows each (404 otherwise: a body
        naming what does not exist is answered like a path that does)."""
        post_ids = list(dict.fromkeys(post_ids))
        unknown = self.posts.unknown(slug, post_ids) if post_ids else []
        if unknown:
            raise NotFound(f"postIds contains unknown post(s) of this workspace: {', '.join(unknown)}")
        return post_ids


def _edited(items: list[dict], key: str, value: str, fields: dict, move: str, what: str) -> list[dict]:
    """``items`` (a workspace's boards or statuses, in order) with the one whose ``key`` is
    ``value`` changed by ``fields`` and, where ``fields`` names ``move``, moved to that index
    (past the end: last); 404 when there is none."""
    index = next((i for i, item in enumerate(items) if item[key] == value), None)
    if index is None:
        raise NotFound(f"{what} '{value}' not found")
    changed = {**items[index], **{k: v for k, v in fields.items() if k != move}}
    reordered = [item for item in items if item[key] != value]
    reordered.insert(int(fields.get(move, index)), changed)  # JSON Schema's integer admits 3.0
    return reordered


def _board_of(doc: dict, board_id: str) -> dict:
    for i, b in enumerate(doc.get("boards", [])):
        if b["id"] == board_id:
            return shapes.board(b, i)
    raise NotFound(f"board '{board_id}' not found")


def _status_of(doc: dict, status_slug: str) -> dict:
    for i, s in enumerate(doc["statuses"]):
        if s["slug"] == status_slug:
            return shapes.status_detail(s, i)
    raise NotFound(f"status '{status_slug}' not found")


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _is_live(doc: dict | None, at: datetime) -> bool:
    """Whether a stored key is unrevoked and unexpired at ``at``."""
    if doc is None or doc.get("revokedAt") is not None:
        return False
    return doc.get("expiresAt") is None or _aware(doc["expiresAt"]) > at


def _str_claim(claims: dict, name: str) -> str | None:
    value = claims.get(name)
    return str(value)[:200] if value is not None else None
