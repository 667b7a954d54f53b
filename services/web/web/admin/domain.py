"""Custom domain: serve the workspace's board on the team's own domain. The team enters the
domain, creates the DNS records the domains service hands out, and sees where verification
stands: what the last check found, "Re-check now", and removing the domain (the domains
service's ``/domain`` routes, managers')."""

from __future__ import annotations

from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

# What each status means to the team, and what to do (docs/services/domains.md, "Statuses"),
# translated where shown.
STATUSES = {
    "pending": (N_("Waiting for DNS"), N_("Create the records below at your DNS provider. They are checked regularly; "
                                          "new records can take a while to be seen.")),
    "verified": (N_("Verified"), N_("Your board is served on this domain.")),
    "broken": (N_("Broken"), N_("A check no longer found the records: the domain is not served until they are back.")),
    "failed": (N_("Failed"), N_("The records were not found in time, so checks have stopped. Fix the records, then re-check.")),
}
DONE = {"set": N_("The domain is saved: create its DNS records."), "checked": N_("Checked just now."),
        "removed": N_("The custom domain is removed.")}


class DomainSection(Section):
    path = "/domain"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200, typed: str | None = None,
             refused: str | None = None):
        """The page; ``error``: a refusal shown above it; ``refused``: the domain form's, shown
        beside the field with what was typed (``typed``)."""
        if redirect := self.allowed(visitor):
            return redirect
        config = self.call(visitor, "GET", "/domain")
        return self.page(visitor, "domain.html", {
            "config": config, "state": STATUSES.get(config["status"]), "typed": config["domain"] if typed is None else typed,
            "error": error, "refused": refused, "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def save(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        domain = (form.get("domain") or "").strip()
        try:
            self.call(visitor, "PUT", "/domain", payload={"domain": domain})
        except ApiError as ex:
            return self.show(visitor, {}, None, ex.status, typed=domain, refused=self.refusal(ex))
        return self.redirect(visitor, done="set")

    def verify(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        try:
            self.call(visitor, "POST", "/domain/verify")
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done="checked")

    def remove(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        self.call(visitor, "DELETE", "/domain")
        return self.redirect(visitor, done="removed")


class Domain(SectionResource):
    section = DomainSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save, form(req))


class DomainVerify(SectionResource):
    section = DomainSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.verify, form(req))


class DomainRemove(SectionResource):
    section = DomainSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.remove, form(req))
