"""First run: the short setup the first owner lands on after accepting the invitation (the
workspace's name, its colour and theme, the first board), ending on a board that takes a post.
Once the workspace has a board the setup is done: its address leads to the board."""

from __future__ import annotations

from urllib.parse import urlencode

from common.errors import BadRequest
from web import shapes
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor
from web.shapes import Redirect

THEMES = ("light", "dark", "system")


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
                      "theme": settings.get("theme") or "light", "board": "", "boardSlug": ""}
        return self.page(visitor, "setup.html", {"values": values, "themes": THEMES, "error": error,
                                                 "invalid": invalid}, status)

    def save(self, visitor: Visitor, form: dict):
        """Each step is one API call, in an order that leaves nothing half done for the owner to
        find: the workspace's name and look first, the board last (the board is what ends the
        setup, so a refusal of it shows the form again with the rest saved)."""
        self.checked(visitor, form)
        values = {k: (form.get(k) or "").strip() for k in ("name", "primaryColor", "theme", "board", "boardSlug")}
        if values["theme"] not in THEMES:
            raise BadRequest(f"theme must be one of {', '.join(THEMES)}")
        if not shapes.HEX_COLOR.fullmatch(values["primaryColor"]):
            return self.show(visitor, {}, values, "Choose a colour as #rrggbb.", "primaryColor", 400)
        slug = values["boardSlug"] or shapes.slug_of(values["board"])
        if not values["board"]:
            return self.show(visitor, {}, values, "Give your first board a name.", "board", 400)
        if not slug:
            return self.show(visitor, {}, values, "Give the board an address: its name has no letter or digit "
                                                  "(a to z, 0 to 9) to make one from.", "boardSlug", 400)
        steps = (("PATCH", "", {"name": values["name"]}),
                 ("PATCH", "/settings", {"primaryColor": values["primaryColor"], "theme": values["theme"]}),
                 ("POST", "/boards", {"slug": slug, "name": values["board"]}))
        for method, path, payload in steps:
            try:
                self.call(visitor, method, path, payload=payload)
            except ApiError as ex:
                message = self.refusal(ex)
                if path == "/boards":  # the board's name, or its address (taken, malformed)
                    field = "boardSlug" if shapes.refused_field(ex.status, message, ("name", "slug")) == "slug" else "board"
                else:
                    field = next(iter(payload))
                return self.show(visitor, {}, values, message, field, ex.status)
        return Redirect(f"/b/{visitor.slug}?" + urlencode({"created": slug}))


class Setup(SectionResource):
    section = SetupSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save, form(req))
