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
