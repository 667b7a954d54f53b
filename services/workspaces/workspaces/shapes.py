"""Response and event shapes (fields as the OpenAPI document, ``workspaces/openapi.yaml``,
names them), built from stored documents."""

from __future__ import annotations

from dataclasses import asdict

from common import auth, i18n
from common.idempotency import ShownOnce
from common.ids import iso
from workspaces import contract, schemas
from workspaces.contract import DEFAULT_STATUS


def status(doc: dict) -> dict:
    return {"slug": doc["slug"], "name": doc["name"], "color": doc["color"]}


def status_detail(doc: dict, order: int) -> dict:
    return {**status(doc), "order": order, "roadmap": doc.get("roadmap", True), "closed": is_closed(doc)}


def is_closed(doc: dict) -> bool:
    """Whether posts in the status count as closed; a status stored before the field existed
    does when its slug is one of the defaults' closed ones."""
    closed = doc.get("closed")
    return bool(closed) if closed is not None else doc["slug"] in contract.CLOSED_STATUSES


def board(doc: dict, position: int) -> dict:
    """A board as the API shows it; ``position``: its index in the workspace's list."""
    return {**snapshot_board(doc), "description": doc.get("description") or "", "position": position,
            "createdAt": iso(doc["createdAt"])}


def boards(doc: dict, archived: bool = False) -> list[dict]:
    """The workspace's boards in their order; the archived ones only when ``archived``."""
    return [board(b, i) for i, b in enumerate(doc.get("boards", [])) if archived or not b.get("archived")]


def snapshot_board(doc: dict) -> dict:
    return {"id": doc["id"], "name": doc["name"], "slug": doc["slug"], "archived": bool(doc.get("archived", False))}


def workspace(doc: dict) -> dict:
    return {"slug": doc["_id"], "name": doc["name"], "logo": doc.get("logo"), "createdAt": iso(doc["createdAt"])}


def settings(doc: dict, sso_secret: str | None) -> dict:
    """The settings managers read; ``sso_secret`` is the stored one, opened by the repository."""
    s = doc.get("settings", {})
    return {
        "logo": doc.get("logo"),
        "primaryColor": s.get("primaryColor", "#4f46e5"),
        "theme": s.get("theme", "light"),
        "hidePoweredBy": s.get("hidePoweredBy", False),
        "anonSubmit": s.get("anonSubmit", False),
        "anonVote": s.get("anonVote", False),
        "anonComment": s.get("anonComment", False),
        "authorVotes": s.get("authorVotes", contract.AUTHOR_VOTES_DEFAULT),
        "hideCustomerNames": bool(s.get("hideCustomerNames", False)),
        "erasedUserContent": s.get("erasedUserContent", "keep"),
        **widget(s),
        **languages(s),
        "brandVoice": s.get("brandVoice", ""),
        "ssoSecret": sso_secret,
        "ssoRequireAud": bool(s.get("ssoRequireAud", False)),
    }


def exported_settings(doc: dict) -> dict:
    """The settings as an export carries them: the workspace's name and every setting but the
    SSO secret (whether one is set shows, never the secret)."""
    kept = {k: v for k, v in settings(doc, None).items() if k != "ssoSecret"}
    return {"slug": doc["_id"], "name": doc["name"], **kept,
            "ssoConfigured": bool(doc.get("settings", {}).get("ssoSecret")), "createdAt": iso(doc["createdAt"])}


def branding(doc: dict) -> dict:
    s = doc.get("settings", {})
    return {
        "workspace": {"slug": doc["_id"], "name": doc["name"], "logo": doc.get("logo")},
        "primaryColor": s.get("primaryColor", "#4f46e5"),
        "theme": s.get("theme", "light"),
        "hidePoweredBy": s.get("hidePoweredBy", False),
        "customDomain": doc.get("customDomain"),
        # Public: the widget (services/widget) reads them as nobody, to answer the pages embedding it.
        **widget(s),
        # Public: which language a page, the widget or a mail speaks (common.i18n.choose).
        **languages(s),
    }


def languages(s: dict) -> dict:
    """The workspace's languages, defaults filled in: every one the platform speaks, English first."""
    enabled = [t for t in (s.get("locales") or i18n.LOCALES) if t in i18n.LOCALES]
    default = s.get("defaultLocale") if s.get("defaultLocale") in enabled else (enabled or [i18n.DEFAULT])[0]
    return {"defaultLocale": default, "locales": enabled or [i18n.DEFAULT]}


def widget(s: dict) -> dict:
    """The embeddable widget's settings, defaults filled in."""
    return {
        "widgetOrigins": list(s.get("widgetOrigins") or []),
        "widgetPosition": s.get("widgetPosition") or schemas.WIDGET_POSITION_DEFAULT,
        "widgetLabel": s.get("widgetLabel") or schemas.WIDGET_LABEL_DEFAULT,
    }


def changelog(doc: dict) -> dict:
    return {
        "id": str(doc["_id"]),
        "title": doc["title"],
        "slug": doc["slug"],
        "content": doc["content"],
        "publishedAt": iso(doc.get("publishedAt")),
        "postIds": list(doc.get("postIds", [])),
        "createdAt": iso(doc["createdAt"]),
    }


def changelog_published(doc: dict, caller: auth.Caller) -> dict:
    """The ``changelog.published`` event: the entry, and who published it."""
    return {**changelog(doc), "actor": auth.actor(caller)}


def api_key(doc: dict) -> dict:
    return {
        "id": doc["keyId"],
        "name": doc["name"],
        "role": doc["role"],
        "prefix": doc["prefix"],
        "createdAt": iso(doc["createdAt"]),
        "revokedAt": iso(doc.get("revokedAt")),
        "expiresAt": iso(doc.get("expiresAt")),
        "parentKeyId": doc.get("parentKeyId"),
        "lastUsedAt": iso(doc.get("lastUsedAt")),
    }


def key_created(doc: dict, caller: auth.Caller) -> dict:
    """The ``api_key.created`` event: the key as listed, without its prefix, and who made it."""
    return {"id": doc["keyId"], "name": doc["name"], "role": doc["role"], "expiresAt": iso(doc.get("expiresAt")),
            "actor": auth.actor(caller)}


def key_revoked(doc: dict, caller: auth.Caller) -> dict:
    """The ``api_key.revoked`` event: which key, and who revoked it."""
    return {"id": doc["keyId"], "name": doc["name"], "actor": auth.actor(caller)}


def settings_changed(fields, caller: auth.Caller) -> dict:
    """The ``workspace.settings_changed`` event: the names of what changed (never the values), and who changed it."""
    return {"fields": sorted(fields), "actor": auth.actor(caller)}


def created_key(doc: dict, key: str) -> ShownOnce:
    """A new key with the key itself: in this answer only, never kept for a retry."""
    slug, key_id = doc["workspace"], doc["keyId"]
    return ShownOnce(
        {**api_key(doc), "key": key},
        f"API key '{key_id}' was created and is listed by GET /v1/workspaces/{slug}/api-keys; if its "
        f"answer was lost, revoke it (DELETE /v1/workspaces/{slug}/api-keys/{key_id}) and create a new key",
    )


def created_workspace(doc: dict, key: str) -> ShownOnce:
    """A new workspace with its first manager key: in this answer only, never kept for a retry."""
    slug = doc["_id"]
    return ShownOnce(
        {"workspace": workspace(doc), "apiKey": key},
        f"workspace '{slug}' was created with a first manager key; if its answer was lost, the operator "
        f"creates another key with POST /v1/workspaces/{slug}/api-keys and revokes the first one, listed "
        f"by GET /v1/workspaces/{slug}/api-keys",
    )


def current_key(doc: dict) -> dict:
    """``GET /api-key``: the presented key (as listed) and the workspace it belongs to."""
    return {"workspace": doc["workspace"], **api_key(doc)}


def agent_context(doc: dict, recent: list[dict]) -> dict:
    """The workspace as the team's agents need it: name, voice, boards, statuses, recent news."""
    return {
        "workspace": {"slug": doc["_id"], "name": doc["name"]},
        "brandVoice": doc.get("settings", {}).get("brandVoice", ""),
        "boards": boards(doc),  # the boards open to posts
        "statuses": [status(s) for s in doc.get("statuses", [])],
        "recentChangelogs": [{"title": c["title"], "content": c["content"]} for c in recent],
    }


def caller(who: auth.Caller) -> dict:
    """The identity the gateway forwards (internal): the caller's fields that are set."""
    return {k: v for k, v in asdict(who).items() if v is not None}


def default_status(doc: dict) -> str | None:
    """New posts get ``open`` while it exists, else the first status in order."""
    slugs = [st["slug"] for st in doc.get("statuses", [])]
    return DEFAULT_STATUS if DEFAULT_STATUS in slugs else (slugs[0] if slugs else None)


def snapshot(doc: dict) -> dict:
    """What other services keep of a workspace (no secrets): the workspace.* event data."""
    s = doc.get("settings", {})
    return {
        "slug": doc["_id"],
        "name": doc["name"],
        "version": doc.get("version", 1),
        "boards": [snapshot_board(b) for b in doc.get("boards", [])],
        "statuses": [status_detail(st, i) for i, st in enumerate(doc.get("statuses", []))],
        "defaultStatus": default_status(doc),
        "anonSubmit": s.get("anonSubmit", False),
        "anonVote": s.get("anonVote", False),
        "anonComment": s.get("anonComment", False),
        "authorVotes": s.get("authorVotes", contract.AUTHOR_VOTES_DEFAULT),
        "hideCustomerNames": bool(s.get("hideCustomerNames", False)),
        "erasedUserContent": s.get("erasedUserContent", "keep"),
    }
