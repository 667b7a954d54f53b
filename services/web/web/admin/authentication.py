"""Sign-in (owners): how end users may sign in to the board, the workspace's OpenID Connect
provider (configured, changed or removed), and the team's email domain at that provider.
Team members may always use every method; these settings are the people service's
(``/sign-in-settings``, ``/oidc``)."""

from __future__ import annotations

from urllib.parse import parse_qs

from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

# (method, label, hint), the words translated where shown.
METHODS = (
    ("email", N_("Email link"), N_("A one-time link sent to their address.")),
    ("passkey", N_("Passkey"), N_("Their device's fingerprint, face or PIN, once they have added one.")),
    ("oidc", N_("Your OpenID Connect provider"), N_("Their account at the provider configured below.")),
)
DONE = {
    "methods": N_("Sign-in methods saved."),
    "oidc": N_("The OpenID Connect provider is saved."),
    "oidc-removed": N_("The OpenID Connect provider is removed."),
}
PROVIDER_FIELDS = ("issuer", "clientId", "name", "teamEmailDomain")


class AuthenticationSection(Section):
    path = "/authentication"
    owner_only = True

    def show(self, visitor: Visitor, params: dict, refused: dict | None = None, status: int = 200,
             typed: dict | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        settings = self.call(visitor, "GET", "/sign-in-settings")
        provider = self.call(visitor, "GET", "/oidc")
        offered = (typed or {}).get("endUserMethods", settings["endUserMethods"])
        values = {k: provider.get(k) or "" for k in PROVIDER_FIELDS}
        values.update({k: v for k, v in (typed or {}).items() if k in PROVIDER_FIELDS})
        origin = self.site._origin(visitor).get("origin") or ""
        return self.page(visitor, "authentication.html", {
            "methods": METHODS,
            "offered": offered,
            "provider": provider,
            "values": values,
            "callback": f"{origin}/b/{visitor.slug}/sign-in/oidc/callback",
            "refused": refused or {},
            "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def save_methods(self, visitor: Visitor, form: dict, chosen: list[str]):
        self.checked(visitor, form)
        methods = [method for method, _label, _hint in METHODS if method in chosen]
        try:
            self.call(visitor, "PATCH", "/sign-in-settings", payload={"endUserMethods": methods})
        except ApiError as ex:
            return self.show(visitor, {}, {"methods": self.refusal(ex)}, ex.status, {"endUserMethods": methods})
        return self.redirect(visitor, done="methods")

    def save_provider(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        typed = {k: (form.get(k) or "").strip() for k in PROVIDER_FIELDS}
        payload = {"issuer": typed["issuer"], "clientId": typed["clientId"], "name": typed["name"] or None,
                   "teamEmailDomain": typed["teamEmailDomain"] or None}
        if payload["name"] is None:
            del payload["name"]  # the provider's default label
        if form.get("publicClient") == "on":
            payload["clientSecret"] = None
        elif form.get("clientSecret"):
            payload["clientSecret"] = form["clientSecret"]  # blank: the stored one stays
        try:
            self.call(visitor, "PUT", "/oidc", payload=payload)
        except ApiError as ex:
            return self.show(visitor, {}, {"oidc": self.refusal(ex)}, ex.status, typed)
        return self.redirect(visitor, done="oidc")

    def remove_provider(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        try:
            self.call(visitor, "DELETE", "/oidc")
        except ApiError as ex:
            return self.show(visitor, {}, {"oidc": self.refusal(ex)}, ex.status)
        return self.redirect(visitor, done="oidc-removed")


def chosen_methods(req) -> list[str]:
    """The checked boxes of the methods form (a repeated field: ``form`` keeps one value only)."""
    body = req.context.get("body") or b""
    return parse_qs(body.decode("utf-8", "replace")).get("endUserMethods", [])


class Authentication(SectionResource):
    section = AuthenticationSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save_methods, form(req), chosen_methods(req))


class AuthenticationOidc(SectionResource):
    section = AuthenticationSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save_provider, form(req))


class AuthenticationOidcRemove(SectionResource):
    section = AuthenticationSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.remove_provider, form(req))
