"""Falcon resources of the domains service, one class per URI template."""

from __future__ import annotations

import re

from common import auth
from common.errors import BadRequest, NotFound
from common.validation import body
from domains import schemas

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")


class Resource:
    def __init__(self, context):
        self.service = context.service
        self.workspaces = context.workspaces

    def manager(self, req, slug: str) -> None:
        """Managers only (401/403), of a workspace that exists (404)."""
        caller = req.context.caller
        auth.require_manager(caller, slug)
        if not SLUG.match(slug):
            raise NotFound(f"workspace '{slug}' not found")
        self.workspaces.require_manager(caller, slug)


class Domain(Resource):
    """GET / PUT / DELETE /v1/workspaces/{slug}/domain."""

    def on_get(self, req, resp, slug):
        self.manager(req, slug)
        resp.media = self.service.shape(self.service.get(slug))

    def on_put(self, req, resp, slug):
        self.manager(req, slug)
        data = body(req, schemas.SET_DOMAIN)
        resp.media = self.service.shape(self.service.set_domain(slug, data["domain"]))

    def on_delete(self, req, resp, slug):
        self.manager(req, slug)
        resp.media = self.service.remove(slug)


class DomainVerify(Resource):
    """POST /v1/workspaces/{slug}/domain/verify: check the DNS records now."""

    def on_post(self, req, resp, slug):
        self.manager(req, slug)
        resp.media = self.service.shape(self.service.verify_now(slug))


# -- internal (not routed by the gateway) -------------------------------------------------


class ResolveHost(Resource):
    """GET /internal/domains/resolve?host=...: the gateway asks whose verified domain a Host is."""

    def on_get(self, req, resp):
        host = req.get_param("host")
        if not host:
            raise BadRequest("query parameter 'host' is required")
        resp.media = {"slug": self.service.resolve_host(host)}
