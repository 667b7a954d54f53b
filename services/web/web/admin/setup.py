"""First run: the short setup the first owner lands on after accepting the invitation (the
workspace's name, its colour and theme, the statuses preset, the first board), ending on a board that takes a post.
Once the workspace has a board the setup is done: its address leads to the board."""

from __future__ import annotations

from urllib.parse import urlencode

from common.errors import BadRequest
from common.i18n import N_, _
from web import shapes
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor
from web.shapes import Redirect

THEMES = {"light": N_("Light"), "dark": N_("Dark"), "system": N_("As the visitor's system")}  # labels translated where shown
# The statuses a workspace starts with are the full pipeline; the simple preset removes those it
# does without (a new workspace has no post in any of them, so each goes).
PRESETS = {"full": (), "simple": ("under-review", "in-progress", "closed")}


class SetupSection(Section):
    path = "/setup"

    def show(self, visitor: Visitor, params: dict, values: dict | None = None, error: str | None = None,
             invalid: str | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        if values is None:
            if self.call(visitor, "GET", "/boards")["items"]:
                return Redirect(f"/b/{visitor.slug}")
            settings = self.call(visitor, "GET", "/settings")
            workspace = self.call(visitor, "GET", "")
            values = {"name": workspace.get("name") or "", "primaryColor": settings.get("primaryColor") or shapes.DEFAULT_COLOR,
                      "theme": settings.get("theme") or "light", "board": "", "boardSlug": "", "statuses": "full"}
        return self.page(visitor, "setup.html", {"values": values, "themes": THEMES, "error": error,
                                                 "invalid": invalid}, status)

    def save(self, visitor: Visitor, form: dict):
        """Each step is one API call, in an order that leaves nothing half done for the owner to
        find: the workspace's name and look first, the board last (the board is what ends the
        setup, so a refusal of it shows the form again with the rest saved)."""
        self.checked(visitor, form)
        values = {k: (form.get(k) or "").strip() for k in ("name", "primaryColor", "theme", "board", "boardSlug", "statuses")}
        values["statuses"] = values["statuses"] or "full"
        if values["theme"] not in THEMES:
            raise BadRequest(_("The theme must be one of %(choices)s.", choices=", ".join(THEMES)))
        if values["statuses"] not in PRESETS:
            raise BadRequest(_("The statuses must be one of %(choices)s.", choices=", ".join(PRESETS)))
        if not shapes.HEX_COLOR.fullmatch(values["primaryColor"]):
            return self.show(visitor, {}, values, _("Choose a colour as #rrggbb."), "primaryColor", 400)
        slug = values["boardSlug"] or shapes.slug_of(values["board"])
        if not values["board"]:
            return self.show(visitor, {}, values, _("Give your first board a name."), "board", 400)
        if not slug:
            return self.show(visitor, {}, values, _("Give the board an address: its name has no letter or digit "
                                                    "(a to z, 0 to 9) to make one from."), "boardSlug", 400)
        steps = (("PATCH", "", {"name": values["name"]}),
                 ("PATCH", "/settings", {"primaryColor": values["primaryColor"], "theme": values["theme"]}),
                 *(("DELETE", f"/statuses/{status}", None) for status in self._present(visitor, PRESETS[values["statuses"]])),
                 ("POST", "/boards", {"slug": slug, "name": values["board"]}))
        for method, path, payload in steps:
            try:
                self.call(visitor, method, path, payload=payload)
            except ApiError as ex:
                message = self.refusal(ex)
                if path == "/boards":  # the board's name, or its address (taken, malformed)
                    field = "boardSlug" if shapes.refused_field(ex.status, message, ("name", "slug")) == "slug" else "board"
                else:
                    field = next(iter(payload or {"statuses": None}))
                return self.show(visitor, {}, values, message, field, ex.status)
        return Redirect(f"/b/{visitor.slug}?" + urlencode({"created": slug}))


    def _present(self, visitor: Visitor, slugs: tuple[str, ...]) -> list[str]:
        """Those of ``slugs`` the workspace still has (a setup sent twice removes nothing twice)."""
        if not slugs:
            return []
        have = {s["slug"] for s in self.call(visitor, "GET", "/statuses")["items"]}
        return [slug for slug in slugs if slug in have]


class Setup(SectionResource):
    section = SetupSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save, form(req))
