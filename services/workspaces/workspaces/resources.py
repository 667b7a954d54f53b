"""Falcon resources of the workspaces service, one class per URI template: HTTP only.

Each reads the path, query and body, calls the service (which checks who may, then what),
and sets the status and media it returns.
"""

from __future__ import annotations

import falcon

from common.validation import media, page_params, param
from workspaces import contract, logos, schemas


class Resource:
    def __init__(self, context):
        self.service = context.service


class WorkspaceList(Resource):
    def on_post(self, req, resp):
        resp.status = falcon.HTTP_201
        resp.media = self.service.create(req.context.caller, media(req))


class WorkspaceItem(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.get(req.context.caller, slug)

    def on_patch(self, req, resp, slug):
        resp.media = self.service.update(req.context.caller, slug, media(req))


class SettingsItem(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.settings(req.context.caller, slug)

    def on_patch(self, req, resp, slug):
        resp.media = self.service.update_settings(req.context.caller, slug, media(req))


class Branding(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.branding(req.context.caller, slug)


class Logo(Resource):
    def on_get(self, req, resp, slug):
        """The uploaded image: cached by browsers and proxies (a changed logo has a new ``?v=``
        in the workspace's ``logo``), 304 to a browser whose copy is this one."""
        logo = self.service.logo(req.context.caller, slug)
        tag = logos.etag(logo["data"])
        resp.cache_control = ["public", f"max-age={contract.LOGO_MAX_AGE}"]
        resp.set_header("ETag", tag)
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Content-Security-Policy", contract.LOGO_CSP)
        if logos.fresh(req.get_header("If-None-Match"), tag):
            resp.status = falcon.HTTP_304
            return
        resp.content_type = logo["contentType"]
        resp.data = bytes(logo["data"])

    def on_put(self, req, resp, slug):
        # The body is the image itself (read once by the kit, to check its signature).
        resp.media = self.service.upload_logo(req.context.caller, slug, req.content_type, lambda: req.context.body or b"")

    def on_delete(self, req, resp, slug):
        resp.media = self.service.remove_logo(req.context.caller, slug)


class AgentContext(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.agent_context(req.context.caller, slug)


class BoardList(Resource):
    def on_get(self, req, resp, slug):
        archived = param(req, "archived", schemas.BOARDS_ARCHIVED) == "true"
        resp.media = self.service.boards(req.context.caller, slug, archived)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.add_board(req.context.caller, slug, media(req))


class BoardItem(Resource):
    def on_patch(self, req, resp, slug, boardId):
        resp.media = self.service.update_board(req.context.caller, slug, boardId, media(req))

    def on_delete(self, req, resp, slug, boardId):
        resp.media = self.service.delete_board(req.context.caller, slug, boardId)


class StatusList(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.statuses(req.context.caller, slug)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.add_status(req.context.caller, slug, media(req))


class StatusItem(Resource):
    def on_patch(self, req, resp, slug, statusSlug):
        resp.media = self.service.update_status(req.context.caller, slug, statusSlug, media(req))

    def on_delete(self, req, resp, slug, statusSlug):
        resp.media = self.service.delete_status(req.context.caller, slug, statusSlug)


class ApiKeyList(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.api_keys(req.context.caller, slug)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.create_key(req.context.caller, slug, media(req))


class ApiKeyItem(Resource):
    def on_delete(self, req, resp, slug, keyId):
        resp.media = self.service.revoke_key(req.context.caller, slug, keyId)


class CurrentApiKey(Resource):
    def on_get(self, req, resp):
        resp.media = self.service.current_key(req.context.caller)


class ChangelogList(Resource):
    def on_get(self, req, resp, slug):
        limit, offset = page_params(req, schemas.CHANGELOG_LIMIT)
        resp.media = self.service.changelogs(req.context.caller, slug, limit, offset)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.create_changelog(req.context.caller, slug, media(req))


class ChangelogItem(Resource):
    def on_get(self, req, resp, slug, changelogId):
        resp.media = self.service.changelog(req.context.caller, slug, changelogId)

    def on_patch(self, req, resp, slug, changelogId):
        resp.media = self.service.update_changelog(req.context.caller, slug, changelogId, media(req))


# -- internal (not routed by the gateway) -------------------------------------------------


class Identity(Resource):
    """POST /internal/credentials: the people service (the platform's identity check) asks who an API
    key or an SSO token belongs to."""

    def on_post(self, req, resp):
        resp.media = self.service.identify(media(req))


class SnapshotItem(Resource):
    """GET /internal/workspaces/{slug}/snapshot: a read model that has not caught up asks."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.snapshot(slug)


class Export(Resource):
    """POST /internal/workspaces/export: a page of a workspace's data, for the portability service."""

    def on_post(self, req, resp):
        resp.media = self.service.export(media(req))


class Import(Resource):
    """POST /internal/workspaces/import: a batch of what an import brings, for the portability service."""

    def on_post(self, req, resp):
        from workspaces.imports import Imports

        resp.media = Imports(self.service).run(media(req))
