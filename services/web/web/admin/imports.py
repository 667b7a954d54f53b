"""Import: the team brings a Canny export or a CSV file into the workspace (the portability
service's ``/imports`` routes, managers'). The form uploads the file (multipart, with its CSRF
token); the page sends it to the API as the import's body, with the visitor's own session, and
lists the imports with their state, progress, counts and errors."""

from __future__ import annotations

import json
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import quote, urlencode

from common.errors import BadRequest
from common.i18n import N_, _
from web.admin.exports import STATES, counted
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import query
from web.service import Visitor

# The file a page takes: the import route's limit (portability.contract.IMPORT_MAX_BYTES) and
# room for the form around it. The site's page route has it as its Route.max_body.
IMPORT_PAGE_MAX_BYTES = 32 * 1024 * 1024 + 64 * 1024
# The counts a row shows (those above 0), in the order a team reads its board.
SHOWN = ("posts", "votes", "comments", "people", "boards", "statuses", "tags", "companies", "merges", "changelogs")
# The kinds of file the form offers (labels translated where shown).
SOURCES = {"canny": N_("Canny (a JSON file, or a zip of its JSON files)"),
           "ours": N_("Our own export (its zip: a whole workspace, from here or another installation)"),
           "csv": N_("CSV, the columns of our own export"), "fider": N_("CSV, the columns of Fider's export")}
DONE = {"started": N_("The import has started: it is listed below with its progress.")}


def row(job: dict) -> dict:
    label, badge = STATES.get(job["status"], (job["status"], "draft"))
    label = _("Done") if job["status"] == "succeeded" else _(label) if job["status"] in STATES else label
    counts = job.get("counts") or {}
    return {**job, "label": label, "badge": badge,
            "brought": ", ".join(counted(k, counts[k]) for k in SHOWN if counts.get(k, 0)) or _("nothing yet")}


def multipart(content_type: str, body: bytes) -> tuple[dict, tuple[str, bytes] | None]:
    """A multipart form's text fields, and its ``file`` field as ``(filename, bytes)`` (None if
    none was chosen)."""
    if not content_type.startswith("multipart/form-data"):
        raise BadRequest(_("This form is sent as multipart/form-data."))
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    fields, upload = {}, None
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name == "file":
            data = part.get_payload(decode=True) or b""
            upload = (part.get_filename() or "import", data) if data else None
        elif name:
            fields[name] = (part.get_payload(decode=True) or b"").decode("utf-8", "replace")
    return fields, upload


class ImportsSection(Section):
    path = "/imports"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        imports = [row(i) for i in self.call(visitor, "GET", "/imports")["items"]]
        return self.page(visitor, "imports.html", {
            "imports": imports, "unfinished": any(i["status"] in ("queued", "running") for i in imports),
            "sources": SOURCES, "error": error, "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def start(self, visitor: Visitor, content_type: str, body: bytes):
        fields, upload = multipart(content_type, body)
        self.checked(visitor, fields)
        choice = fields.get("source") if fields.get("source") in SOURCES else None
        if choice is None or upload is None:
            return self.show(visitor, {}, _("Choose the kind of file and the file to import."), 400)
        filename, data = upload
        if choice == "canny":
            media = "application/zip" if filename.lower().endswith(".zip") else "application/json"
            params = {"source": "canny"}
        elif choice == "ours":
            media, params = "application/zip", {"source": "ours"}
        else:
            media = "text/csv"
            params = {"source": "csv", "preset": "fider" if choice == "fider" else "ours"}
        params["filename"] = filename[-200:]
        api = self.site.api
        url = f"{api.base}/v1/workspaces/{quote(visitor.slug)}/imports?{urlencode(params)}"
        try:
            answer = api.http.request("POST", url, body=data, headers={"Accept": "application/json", "Content-Type": media,
                                                                      **visitor.identity})
        except Exception:  # noqa: BLE001 - the API out of reach: said on the page
            return self.show(visitor, {}, _("The API cannot be reached now; try again."), 503)
        if answer.status != 202:
            try:
                message = json.loads(answer.data or b"null").get("error")
            except (ValueError, AttributeError):
                message = None
            # A refusal the page shows (400, 413, 415...) is said above the form; others are the error page.
            return self.show(visitor, {}, self.refusal(ApiError(answer.status, message or f"the API answered {answer.status}")),
                             answer.status)
        return self.redirect(visitor, done="started")


class Imports(SectionResource):
    section = ImportsSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        body = req.context.get("body")
        if body is None:
            body = req.bounded_stream.read()
        self.respond(req, resp, slug, self.admin.start, req.content_type or "", body)
