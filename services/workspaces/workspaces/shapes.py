"""Response and event shapes (fields as the OpenAPI document, ``workspaces/openapi.yaml``,
names them), built from stored documents."""

from __future__ import annotations

from dataclasses import asdict

from common import auth
from common.ids import iso
from workspaces.contract import DEFAULT_STATUS


def status(doc: dict) -> dict:
    return {"slug": doc["slug"], "name": doc["name"], "color": doc["color"]}


def status_detail(doc: dict, order: int) -> dict:
    return {**status(doc), "order": order, "roadmap": doc.get("roadmap", True)}


def board(doc: dict) -> dict:
    return {"id": doc["id"], "name": doc["name"], "slug": doc["slug"]}


def workspace(doc: dict) -> dict:
    return {"slug": doc["_id"], "name": doc["name"], "logo": doc.get("logo"), "createdAt": iso(doc["createdAt"])}


def settings(doc: dict) -> dict:
    s = doc.get("settings", {})
    return {
        "logo": doc.get("logo"),
        "primaryColor": s.get("primaryColor", "#4f46e5"),
        "theme": s.get("theme", "light"),
        "hidePoweredBy": s.get("hidePoweredBy", False),
        "anonSubmit": s.get("anonSubmit", False),
        "anonVote": s.get("anonVote", False),
        "anonComment": s.get("anonComment", False),
        "brandVoice": s.get("brandVoice", ""),
        "ssoSecret": s.get("ssoSecret"),
    }


def branding(doc: dict) -> dict:
    s = settings(doc)
    return {
        "workspace": {"slug": doc["_id"], "name": doc["name"], "logo": doc.get("logo")},
        "primaryColor": s["primaryColor"],
        "theme": s["theme"],
        "hidePoweredBy": s["hidePoweredBy"],
        "customDomain": doc.get("customDomain"),
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


def api_key(doc: dict) -> dict:
    return {
        "id": doc["keyId"],
        "name": doc["name"],
        "role": doc["role"],
        "prefix": doc["prefix"],
        "createdAt": iso(doc["createdAt"]),
        "revokedAt": iso(doc.get("revokedAt")),
    }


def current_key(doc: dict) -> dict:
    """``GET /api-key``: the presented key (as listed) and the workspace it belongs to."""
    return {"workspace": doc["workspace"], **api_key(doc)}


def agent_context(doc: dict, recent: list[dict]) -> dict:
    """The workspace as the team's agents need it: name, voice, boards, statuses, recent news."""
    return {
        "workspace": {"slug": doc["_id"], "name": doc["name"]},
        "brandVoice": doc.get("settings", {}).get("brandVoice", ""),
        "boards": [board(b) for b in doc.get("boards", [])],
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
        "boards": [board(b) for b in doc.get("boards", [])],
        "statuses": [status_detail(st, i) for i, st in enumerate(doc.get("statuses", []))],
        "defaultStatus": default_status(doc),
        "anonSubmit": s.get("anonSubmit", False),
        "anonVote": s.get("anonVote", False),
        "anonComment": s.get("anonComment", False),
    }
