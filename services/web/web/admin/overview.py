"""Overview: the admin area's front page, what the workspace holds and where to go next."""

from __future__ import annotations

from web.admin.section import Section, SectionResource
from web.resources import query
from web.service import Visitor


class OverviewSection(Section):
    path = ""

    def show(self, visitor: Visitor, params: dict):
        if redirect := self.allowed(visitor):
            return redirect
        boards = self.call(visitor, "GET", "/boards")["items"]
        return self.page(visitor, "overview.html", {"boards": boards})


class Overview(SectionResource):
    section = OverviewSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))
