"""Audit log: who did what to the workspace's people, keys and settings, newest first (the people
service's ``/audit-log``, the team's). Pages are links (``?page=``) and the filter by action is a
GET form (``?type=``): both work without JavaScript."""

from __future__ import annotations

from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import query
from web.service import Visitor

PAGE = 50  # entries a page (the API's default page)
# What each entry type says, in the order the filter offers them (docs/services/people.md,
# the audit log). A type the site does not know yet is shown as the API names it.
ACTIONS = {
    "sign_in": "Signed in",
    "sign_out": "Signed out",
    "sign_out_everywhere": "Signed out everywhere",
    "invitation.created": "Invited",
    "invitation.revoked": "Revoked an invitation",
    "invitation.accepted": "Joined the team",
    "member.role_changed": "Changed a role",
    "member.removed": "Removed a member",
    "api_key.created": "Created an API key",
    "api_key.revoked": "Revoked an API key",
    "settings.changed": "Changed settings",
    "sign_in_settings.changed": "Changed sign-in settings",
    "oidc.changed": "Changed single sign-on",
    "passkey.registered": "Registered a passkey",
    "passkey.removed": "Removed a passkey",
    "post.deleted": "Deleted a post",
    "comment.deleted": "Deleted a comment",
    "export.created": "Started an export",
    "import.finished": "Finished an import",
}


def target(entry: dict) -> str:
    """What an entry is about, in a few words (its data names it in the fields below)."""
    data = entry.get("data") or {}
    for key in ("member", "passkey", "post"):  # {id, name}, or a post's {id, title}
        named = data.get(key)
        if isinstance(named, dict) and (named.get("name") or named.get("title")):
            return named.get("name") or named["title"]
    for key in ("email", "name", "title", "issuer"):
        if isinstance(data.get(key), str) and data[key]:
            return data[key]
    if isinstance(data.get("fields"), list) and data["fields"]:
        return ", ".join(str(f) for f in data["fields"])
    if entry["type"] == "sign_in" and data.get("method"):
        return f"by {str(data['method']).replace('_', ' ')}"
    return ""


def details(entry: dict) -> str:
    """What changed, where the entry says more than its target: a role and its change."""
    data = entry.get("data") or {}
    if data.get("from") and data.get("to"):
        return f"{data['from']} → {data['to']}"
    if isinstance(data.get("role"), str):
        return data["role"]
    if data.get("byAuthor") is True:
        return "by its author"
    if isinstance(data.get("sessions"), int):
        return f"{data['sessions']} session{'s' if data['sessions'] != 1 else ''} ended"
    return ""


def who(actor: dict | None) -> str:
    if actor is None:
        return "Not signed in"
    if str(actor.get("id", "")).startswith("key:"):
        return f"API key “{actor.get('name') or 'unnamed'}”"
    return actor.get("name") or actor.get("id") or "Someone"


class AuditSection(Section):
    path = "/audit"

    def show(self, visitor: Visitor, params: dict):
        if redirect := self.allowed(visitor):
            return redirect
        raw = params.get("page") or "1"
        page = int(raw) if raw.isdigit() and 0 < int(raw) < 10_000 else 1
        action = params.get("type") or ""
        asked = {"limit": PAGE + 1, "offset": (page - 1) * PAGE, **({"type": action} if action else {})}
        error, status = None, 200
        try:
            items = self.call(visitor, "GET", "/audit-log", asked)["items"]
        except ApiError as ex:  # an action the API does not know, a page past the deepest
            items, error, status = [], self.refusal(ex), ex.status
        entries = [{**e, "action": ACTIONS.get(e["type"], e["type"]), "who": who(e.get("actor")), "target": target(e),
                    "details": details(e), "when": e["at"][:16].replace("T", " ")} for e in items[:PAGE]]
        more = len(items) > PAGE
        filters = {"type": action} if action else {}
        return self.page(visitor, "audit.html", {
            "entries": entries, "actions": ACTIONS, "action": action, "page": page, "refused": error,
            "newer": self.url(visitor, **filters, **({"page": page - 1} if page > 2 else {})) if page > 1 else None,
            "older": self.url(visitor, **filters, page=page + 1) if more else None,
        }, status)


class Audit(SectionResource):
    section = AuditSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))
