"""Falcon resources of the workspaces service, one class per URI template."""

from __future__ import annotations

from dataclasses import asdict

import falcon

from common import auth
from common.errors import BadRequest
from common.validation import body, int_param
from workspaces import schemas, shapes


def caller(req) -> auth.Caller:
    return req.context.caller


def manager(req, slug: str) -> None:
    auth.require_manager(caller(req), slug)


class Resource:
    def __init__(self, context):
        self.service = context.service


class WorkspaceList(Resource):
    def on_post(self, req, resp):
        auth.require_admin(caller(req))
        data = body(req, schemas.CREATE_WORKSPACE)
        doc, key = self.service.create(data["slug"], data["name"])
        resp.status = falcon.HTTP_201
        resp.media = {"workspace": shapes.workspace(doc), "apiKey": key}


class WorkspaceItem(Resource):
    def on_get(self, req, resp, slug):
        resp.media = shapes.workspace(self.service.get(slug))

    def on_patch(self, req, resp, slug):
        manager(req, slug)
        resp.media = shapes.workspace(self.service.update_workspace(slug, body(req, schemas.UPDATE_WORKSPACE)))


class SettingsItem(Resource):
    def on_get(self, req, resp, slug):
        manager(req, slug)
        resp.media = shapes.settings(self.service.get(slug))

    def on_patch(self, req, resp, slug):
        manager(req, slug)
        data = req.get_media(default_when_empty={})
        if isinstance(data, dict) and "logo" in data:
            raise BadRequest("field 'logo' is read-only: set it with PATCH /v1/workspaces/{slug}")
        resp.media = shapes.settings(self.service.update_settings(slug, body(req, schemas.SETTINGS)))


class Branding(Resource):
    def on_get(self, req, resp, slug):
        resp.media = shapes.branding(self.service.get(slug))


class AgentContext(Resource):
    def on_get(self, req, resp, slug):
        manager(req, slug)
        resp.media = self.service.agent_context(slug)


class BoardList(Resource):
    def on_get(self, req, resp, slug):
        resp.media = {"items": [shapes.board(b) for b in self.service.get(slug).get("boards", [])]}

    def on_post(self, req, resp, slug):
        manager(req, slug)
        data = body(req, schemas.CREATE_BOARD)
        resp.status = falcon.HTTP_201
        resp.media = shapes.board(self.service.add_board(slug, data["slug"], data["name"]))


class StatusList(Resource):
    def on_get(self, req, resp, slug):
        statuses = self.service.get(slug).get("statuses", [])
        resp.media = {"items": [shapes.status_detail(s, i) for i, s in enumerate(statuses)]}

    def on_post(self, req, resp, slug):
        manager(req, slug)
        resp.status = falcon.HTTP_201
        resp.media = self.service.add_status(slug, body(req, schemas.CREATE_STATUS))


class StatusItem(Resource):
    def on_patch(self, req, resp, slug, statusSlug):
        manager(req, slug)
        resp.media = self.service.update_status(slug, statusSlug, body(req, schemas.UPDATE_STATUS))


class ApiKeyList(Resource):
    def on_get(self, req, resp, slug):
        manager(req, slug)
        resp.media = {"items": [shapes.api_key(k) for k in self.service.list_keys(slug)]}

    def on_post(self, req, resp, slug):
        manager(req, slug)
        data = body(req, schemas.CREATE_API_KEY)
        doc, key = self.service.create_key(slug, data["name"])
        resp.status = falcon.HTTP_201
        resp.media = {**shapes.api_key(doc), "key": key}


class ApiKeyItem(Resource):
    def on_delete(self, req, resp, slug, keyId):
        manager(req, slug)
        resp.media = shapes.api_key(self.service.revoke_key(slug, keyId))


class ChangelogList(Resource):
    def on_get(self, req, resp, slug):
        drafts = caller(req).is_manager_of(slug)
        limit = int_param(req, "limit", 20, 1, 100)
        offset = int_param(req, "offset", 0, 0, 100_000)
        resp.media = {"items": [shapes.changelog(c) for c in self.service.list_changelogs(slug, drafts, limit, offset)]}

    def on_post(self, req, resp, slug):
        manager(req, slug)
        resp.status = falcon.HTTP_201
        resp.media = shapes.changelog(self.service.create_changelog(slug, body(req, schemas.CREATE_CHANGELOG)))


class ChangelogItem(Resource):
    def on_get(self, req, resp, slug, changelogId):
        drafts = caller(req).is_manager_of(slug)
        resp.media = shapes.changelog(self.service.get_changelog(slug, changelogId, drafts))

    def on_patch(self, req, resp, slug, changelogId):
        manager(req, slug)
        data = body(req, schemas.UPDATE_CHANGELOG)
        resp.media = shapes.changelog(self.service.update_changelog(slug, changelogId, data))


# -- internal (not routed by the gateway) -------------------------------------------------


class Identity(Resource):
    """POST /internal/identity: the gateway asks who a credential belongs to."""

    def on_post(self, req, resp):
        data = body(req, schemas.IDENTITY)
        who = self.service.identify(data["workspace"], data.get("apiKey"), data.get("userToken"))
        resp.media = {k: v for k, v in asdict(who).items() if v is not None}


class SnapshotItem(Resource):
    """GET /internal/workspaces/{slug}/snapshot: a read model that has not caught up asks."""

    def on_get(self, req, resp, slug):
        resp.media = shapes.snapshot(self.service.get(slug))

