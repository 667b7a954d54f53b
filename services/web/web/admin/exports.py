"""Export: the team takes everything of the workspace away as a zip (the portability service's
``/exports`` routes, managers'). "Start an export" queues one; the list shows each export's
state, what it holds and its size, and a Download link that streams the zip through this site
with the visitor's own session (the API, not the page, decides who may)."""

from __future__ import annotations

import json
from urllib.parse import quote

from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor
from web.shapes import Redirect

# What each status says to the team, and the badge it wears (classes the stylesheet has).
STATES = {"queued": ("Waiting", "draft"), "running": ("Running", "draft"), "succeeded": ("Ready", "published"),
          "failed": ("Failed", "archived")}
# The counts a row shows, in the order a team reads its board.
SHOWN = (("posts", "post", "posts"), ("votes", "vote", "votes"), ("comments", "comment", "comments"),
         ("people", "person", "people"), ("boards", "board", "boards"), ("companies", "company", "companies"),
         ("changelogs", "changelog entry", "changelog entries"))
DONE = {"started": "The export has started: it is listed below, and ready to download once it says so."}


def size(value: int | None) -> str:
    if value is None:
        return ""
    for unit in ("bytes", "KB", "MB"):
        if value < 1024 or unit == "MB":
            return f"{value} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return ""


def row(export: dict) -> dict:
    label, badge = STATES.get(export["status"], (export["status"], "draft"))
    counts = export.get("counts") or {}
    return {**export, "label": label, "badge": badge, "size": size(export.get("sizeBytes")),
            "held": ", ".join(f"{counts.get(k, 0)} {one if counts.get(k, 0) == 1 else many}" for k, one, many in SHOWN)
            if export["status"] == "succeeded" else "",
            "ready": export["status"] == "succeeded"}


class ExportsSection(Section):
    path = "/exports"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        exports = [row(e) for e in self.call(visitor, "GET", "/exports")["items"]]
        return self.page(visitor, "exports.html", {
            "exports": exports, "unfinished": any(e["status"] in ("queued", "running") for e in exports),
            "error": error, "done": DONE.get(params.get("done") or ""),
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
