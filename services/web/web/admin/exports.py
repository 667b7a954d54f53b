"""Export: the team takes everything of the workspace away as a zip (the portability service's
``/exports`` routes, managers'). "Start an export" queues one; the list shows each export's
state, what it holds and its size, and a Download link that streams the zip through this site
with the visitor's own session (the API, not the page, decides who may)."""

from __future__ import annotations

import json
from urllib.parse import quote

from common import i18n
from common.i18n import N_, _, ngettext
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor
from web.shapes import Redirect

# What each status says to the team (translated where shown), and the badge it wears (classes
# the stylesheet has).
STATES = {"queued": (N_("Waiting"), "draft"), "running": (N_("Running"), "draft"), "succeeded": (N_("Ready"), "published"),
          "failed": (N_("Failed"), "archived")}
# The counts a row shows, in the order a team reads its board.
SHOWN = ("posts", "votes", "comments", "people", "boards", "companies", "changelogs")
DONE = {"started": N_("The export has started: it is listed below, and ready to download once it says so.")}


def counted(key: str, n: int) -> str:
    """``n`` of what an export or import counts under ``key``, in the reader's words ("3 posts");
    a key the page does not know yet as the API names it."""
    words = {
        "posts": lambda: ngettext("%(num)s post", "%(num)s posts", n),
        "votes": lambda: ngettext("%(num)s vote", "%(num)s votes", n),
        "comments": lambda: ngettext("%(num)s comment", "%(num)s comments", n),
        "people": lambda: ngettext("%(num)s person", "%(num)s people", n),
        "boards": lambda: ngettext("%(num)s board", "%(num)s boards", n),
        "statuses": lambda: ngettext("%(num)s status", "%(num)s statuses", n),
        "tags": lambda: ngettext("%(num)s tag", "%(num)s tags", n),
        "companies": lambda: ngettext("%(num)s company", "%(num)s companies", n),
        "merges": lambda: ngettext("%(num)s merge", "%(num)s merges", n),
        "changelogs": lambda: ngettext("%(num)s changelog entry", "%(num)s changelog entries", n),
    }
    return words[key]() if key in words else f"{i18n.number(n)} {key}"


def size(value: int | None) -> str:
    """A file's size as the reader's locale writes it: "512 bytes", "1.5 KB", "2,5 MB"."""
    if value is None:
        return ""
    if value < 1024:
        return ngettext("%(num)s byte", "%(num)s bytes", value)
    if value < 1024 * 1024:
        return _("%(size)s KB", size=i18n.number(round(value / 1024, 1)))
    return _("%(size)s MB", size=i18n.number(round(value / 1024 / 1024, 1)))


def row(export: dict) -> dict:
    label, badge = STATES.get(export["status"], (export["status"], "draft"))
    counts = export.get("counts") or {}
    return {**export, "label": _(label) if export["status"] in STATES else label, "badge": badge,
            "size": size(export.get("sizeBytes")),
            "held": ", ".join(counted(k, counts.get(k, 0)) for k in SHOWN) if export["status"] == "succeeded" else "",
            "ready": export["status"] == "succeeded"}


class ExportsSection(Section):
    path = "/exports"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        exports = [row(e) for e in self.call(visitor, "GET", "/exports")["items"]]
        return self.page(visitor, "exports.html", {
            "exports": exports, "unfinished": any(e["status"] in ("queued", "running") for e in exports),
            "error": error, "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def start(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        try:
            self.call(visitor, "POST", "/exports")
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done="started")

    def download(self, visitor: Visitor, export_id: str):
        """The API's answer with the zip, unread (the resource streams it to the browser), or a
        redirect to sign in; an API refusal (404, 409) is raised as the error page."""
        if redirect := self.allowed(visitor):
            return redirect
        api = self.site.api
        url = f"{api.base}/v1/workspaces/{quote(visitor.slug)}/exports/{quote(export_id, safe='')}/download"
        answer = api.http.request("GET", url, headers={"Accept": "application/zip, application/json", **visitor.identity},
                                  preload_content=False)
        if answer.status != 200:
            message = _error_of(answer)
            raise ApiError(answer.status, message or f"the API answered {answer.status}")
        return answer


def _error_of(answer) -> str | None:
    try:
        body = json.loads(answer.read() or b"null")
    except ValueError:
        body = None
    finally:
        answer.release_conn()
    return body.get("error") if isinstance(body, dict) else None


class Exports(SectionResource):
    section = ExportsSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.start, form(req))


class ExportDownload(SectionResource):
    """The zip, streamed: ``respond`` finds the visitor and renders any refusal; a download it
    got is written over its placeholder answer."""

    section = ExportsSection

    def on_get(self, req, resp, slug, exportId):
        got = {}

        def fetch(visitor: Visitor):
            answer = self.admin.download(visitor, exportId)
            if isinstance(answer, Redirect):
                return answer
            got["answer"] = answer
            return Redirect(self.admin.url(visitor))  # replaced below

        self.respond(req, resp, slug, fetch)
        answer = got.get("answer")
        if answer is None:
            return
        resp.status = 200
        resp.location = None
        resp.text = None
        resp.content_type = "application/zip"
        if answer.headers.get("Content-Disposition"):
            resp.set_header("Content-Disposition", answer.headers["Content-Disposition"])
        length = answer.headers.get("Content-Length")
        resp.set_stream(answer, int(length) if length and length.isdigit() else None)
