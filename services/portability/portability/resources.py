"""Falcon resources of the portability service, one class per URI template: HTTP only."""

from __future__ import annotations

import falcon


class Resource:
    def __init__(self, context):
        self.service = context.service


class ExportList(Resource):
    """GET / POST /v1/workspaces/{slug}/exports: the workspace's exports; start one."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.list(req.context.caller, slug)

    def on_post(self, req, resp, slug):
        # No body to read: an export is of the whole workspace (a body sent is ignored).
        resp.media = self.service.start(req.context.caller, slug)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/workspaces/{slug}/exports/{resp.media['id']}"


class ExportItem(Resource):
    """GET /v1/workspaces/{slug}/exports/{exportId}: an export's status, progress and counts."""

    def on_get(self, req, resp, slug, exportId):
        resp.media = self.service.get(req.context.caller, slug, exportId)


class ExportDownload(Resource):
    """GET /v1/workspaces/{slug}/exports/{exportId}/download: the zip, streamed from GridFS."""

    def on_get(self, req, resp, slug, exportId):
        filename, stream = self.service.download(req.context.caller, slug, exportId)
        resp.content_type = "application/zip"
        resp.downloadable_as = filename
        resp.set_header("Cache-Control", "private, no-store")
        resp.set_stream(stream, stream.length)


class ImportList(Resource):
    """GET / POST /v1/workspaces/{slug}/imports?source=canny|csv: the workspace's imports; start one
    with the file as the body (its Content-Type says which kind of file)."""

    def __init__(self, context):
        self.imports = context.imports

    def on_get(self, req, resp, slug):
        resp.media = self.imports.list(req.context.caller, slug)

    def on_post(self, req, resp, slug):
        data = req.stream.read()  # read whole already: the signature covers it (common.app.InternalAuth)
        params = {name: value for name, value in req.params.items() if isinstance(value, str)}
        resp.media = self.imports.start(req.context.caller, slug, params.get("source"), req.content_type, data, params,
                                        params.get("filename"))
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/workspaces/{slug}/imports/{resp.media['id']}"


class ImportItem(Resource):
    """GET /v1/workspaces/{slug}/imports/{importId}: an import's status, progress, counts and errors."""

    def __init__(self, context):
        self.imports = context.imports

    def on_get(self, req, resp, slug, importId):
        resp.media = self.imports.get(req.context.caller, slug, importId)
