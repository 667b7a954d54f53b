"""Audit log: who did what to the workspace's people, keys and settings, newest first (the people
service's ``/audit-log``, the team's). Pages are links (``?page=``) and the filter by action is a
GET form (``?type=``): both work without JavaScript."""

from __future__ import annotations

from common.i18n import N_, _, ngettext
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import query
from web.service import Visitor

PAGE = 50  # entries a page (the API's default page)
# What each entry type says, in the order the filter offers them (docs/services/people.md,
# the audit log), translated where shown. A type the site does not know yet is shown as the API names it.
ACTIONS = {
    "sign_in": N_("Signed in"),
    "sign_out": N_("Signed out"),
    "sign_out_everywhere": N_("Signed out everywhere"),
    "invitation.created": N_("Invited"),
    "invitation.revoked": N_("Revoked an invitation"),
    "invitation.accepted": N_("Joined the team"),
    "member.role_changed": N_("Changed a role"),
    "member.removed": N_("Removed a member"),
    "api_key.created": N_("Created an API key"),
    "api_key.revoked": N_("Revoked an API key"),
    "settings.changed": N_("Changed settings"),
    "sign_in_settings.changed": N_("Changed sign-in settings"),
    "oidc.changed": N_("Changed single sign-on"),
    "passkey.registered": N_("Registered a passkey"),
    "passkey.removed": N_("Removed a passkey"),
    "post.deleted": N_("Deleted a post"),
    "comment.deleted": N_("Deleted a comment"),
    "export.created": N_("Started an export"),
    "import.finished": N_("Finished an import"),
}
# How a person signed in (a sign_in entry's ``method``); another is shown as the API names it.
METHODS = {"email": N_("by email link"), "invitation": N_("by invitation"), "passkey": N_("by passkey"),
           "oidc": N_("by single sign-on"), "sso": N_("by your app's sign-in link")}


# A role an entry names (a member's, an API key's); another is shown as the API names it.
ROLES = {"owner": N_("Owner"), "manager": N_("Manager"), "read": N_("Read"), "write": N_("Write")}


def role_name(role: str) -> str:
    return _(ROLES[role]) if role in ROLES else role


def action_name(kind: str) -> str:
    return _(ACTIONS[kind]) if kind in ACTIONS else kind


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
        method = str(data["method"])
        return _(METHODS[method]) if method in METHODS else method
    return ""


def details(entry: dict) -> str:
    """What changed, where the entry says more than its target: a role and its change."""
    data = entry.get("data") or {}
    if data.get("from") and data.get("to"):
        return _("from %(old)s to %(new)s", old=role_name(str(data["from"])), new=role_name(str(data["to"])))
    if isinstance(data.get("role"), str):
        return role_name(data["role"])
    if data.get("byAuthor") is True:
        return _("by its author")
    if isinstance(data.get("sessions"), int):
        return ngettext("%(num)s session ended", "%(num)s sessions ended", data["sessions"])
    return ""


def who(actor: dict | None) -> str:
    if actor is None:
        return _("Not signed in")
    if str(actor.get("id", "")).startswith("key:"):
        return _("API key “%(name)s”", name=actor.get("name") or _("unnamed"))
    return actor.get("name") or actor.get("id") or _("Someone")


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
        entries = [{**e, "action": action_name(e["type"]), "who": who(e.get("actor")), "target": target(e),
                    "details": details(e)} for e in items[:PAGE]]
        more = len(items) > PAGE
        filters = {"type": action} if action else {}
        return self.page(visitor, "audit.html", {
            "entries": entries, "actions": {kind: action_name(kind) for kind in ACTIONS}, "action": action, "page": page,
            "refused": error,
            "newer": self.url(visitor, **filters, **({"page": page - 1} if page > 2 else {})) if page > 1 else None,
            "older": self.url(visitor, **filters, page=page + 1) if more else None,
        }, status)


class Audit(SectionResource):
    section = AuditSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))
