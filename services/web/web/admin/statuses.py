"""Statuses: the stages a post goes through, in their order: added (the slug made from the
name), renamed, recoloured, moved up and down, shown on the roadmap or not, counted as closed or
not, and deleted while no post is in one (the API refuses otherwise, and the last status). Every
change is one call of the workspaces API."""

from __future__ import annotations

from common.i18n import N_, _
from common.validation import check
from web.admin.boards import notice, position_after, slug_from
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

STATUS_ACTIONS = ("save", "up", "down", "delete")
STATUS_ACTION = {"type": "object", "properties": {"action": {"enum": list(STATUS_ACTIONS)}}, "required": ["action"]}
STATUS_DONE = {"created": N_("Status “%(name)s” added."), "saved": N_("Status “%(name)s” saved."),
               "moved": N_("Status “%(name)s” moved."), "deleted": N_("Status “%(name)s” deleted.")}
DEFAULT_COLOR = "#64748b"


class StatusesSection(Section):
    path = "/statuses"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200, typed: dict | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        statuses = self.call(visitor, "GET", "/statuses")["items"]
        for s in statuses:  # a colour input takes #rrggbb only (the API takes #rgb too)
            c = s["color"]
            s["color"] = "#" + "".join(ch * 2 for ch in c[1:]) if len(c) == 4 else c
        return self.page(visitor, "statuses.html", {
            "statuses": statuses, "error": error, "done": None if error else notice(STATUS_DONE, params),
            "typed": typed or {"color": DEFAULT_COLOR, "roadmap": True},
        }, status)

    def create(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        name = (form.get("name") or "").strip()
        typed = {"name": name, "slug": (form.get("slug") or "").strip(), "color": form.get("color") or DEFAULT_COLOR,
                 "roadmap": "roadmap" in form, "closed": "closed" in form}
        slug = slug_from(form)
        if not slug:
            refusal = _("Give the status a name.") if not name else \
                _("Give the status a slug: its name has no letter or digit (a to z, 0 to 9) to make one from.")
            return self.show(visitor, {}, refusal, 400, typed)
        payload = {"name": name, "slug": slug, "color": typed["color"], "roadmap": typed["roadmap"], "closed": typed["closed"]}
        try:
            created = self.call(visitor, "POST", "/statuses", payload=payload)
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status, typed)
        return self.redirect(visitor, done="created", name=created["name"])

    def change(self, visitor: Visitor, status_slug: str, form: dict):
        self.checked(visitor, form)
        action = check(form, STATUS_ACTION)["action"]
        item = f"/statuses/{status_slug}"
        try:
            if action == "delete":
                gone = self.call(visitor, "DELETE", item)
                return self.redirect(visitor, done="deleted", name=gone["name"])
            if action == "save":
                # An unticked box is absent from the form: off.
                payload = {"name": (form.get("name") or "").strip(), "color": form.get("color") or "",
                           "roadmap": "roadmap" in form, "closed": "closed" in form}
                done = "saved"
            else:
                payload, done = {"order": position_after(form, action)}, "moved"
            changed = self.call(visitor, "PATCH", item, payload=payload)
        except ApiError as ex:  # gone meanwhile (404), a status in use (409): the list as it is, and why
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done=done, name=changed["name"])


class Statuses(SectionResource):
    section = StatusesSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.create, form(req))


class StatusChange(SectionResource):
    section = StatusesSection

    def on_post(self, req, resp, slug, statusSlug):
        self.respond(req, resp, slug, self.admin.change, statusSlug, form(req))
