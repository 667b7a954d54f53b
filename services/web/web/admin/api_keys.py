"""API keys: the workspace's keys (name, role, created, expiry, last use), creating one (shown
once, on the page that answers the form: never in a URL or a later page), and revoking one
after a confirmation that works without JavaScript (a ``<details>`` holding the final form)."""

from __future__ import annotations

import re

from common.errors import NotFound
from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

# What a key may do (the workspaces service's roles), as the form offers them (labels translated where shown).
ROLES = (
    ("read", N_("Read: what any visitor may see")),
    ("write", N_("Write: submit, vote and comment as an agent")),
    ("manager", N_("Manager: everything in the workspace")),
)
# A role's name in the list of keys.
ROLE_NAMES = {"read": N_("Read"), "write": N_("Write"), "manager": N_("Manager")}
# How long a new key lives (the API's grants last 60 s to a day; "" is a long-lived key).
EXPIRIES = (("", N_("Never")), ("3600", N_("In 1 hour")), ("86400", N_("In 1 day")))
KEY_ID = re.compile(r"[0-9a-f]{16}")
DONE = {"revoked": N_("The key was revoked: it stops working within seconds.")}


class ApiKeysSection(Section):
    path = "/api-keys"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200,
             created: dict | None = None, typed: dict | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        keys = self.call(visitor, "GET", "/api-keys")["items"]
        live = [k for k in keys if not k.get("revokedAt")]
        revoked = [k for k in keys if k.get("revokedAt")]
        return self.page(visitor, "api_keys.html", {
            "keys": live, "revoked": revoked, "roles": ROLES, "role_names": ROLE_NAMES, "expiries": EXPIRIES, "created": created,
            "typed": typed or {}, "error": error, "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def create(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        typed = {"name": (form.get("name") or "").strip(), "role": form.get("role") or "read",
                 "expires": form.get("expires") or ""}
        payload = {"name": typed["name"], "role": typed["role"]}
        if typed["expires"]:
            payload["expiresInSeconds"] = int(typed["expires"]) if typed["expires"].isdigit() else typed["expires"]
        try:
            created = self.call(visitor, "POST", "/api-keys", payload=payload)
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status, typed=typed)
        # The key is in this answer only: shown here, never put in a redirect's URL.
        return self.show(visitor, {}, created=created)

    def revoke(self, visitor: Visitor, key_id: str, form: dict):
        self.checked(visitor, form)
        if not KEY_ID.fullmatch(key_id):
            raise NotFound(_("There is no API key “%(id)s”.", id=key_id))
        try:
            self.call(visitor, "DELETE", f"/api-keys/{key_id}")
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done="revoked")


class ApiKeys(SectionResource):
    section = ApiKeysSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.create, form(req))


class ApiKeyRevoke(SectionResource):
    section = ApiKeysSection

    def on_post(self, req, resp, slug, keyId):
        self.respond(req, resp, slug, self.admin.revoke, keyId, form(req))
