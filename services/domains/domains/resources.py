"""Falcon resources of the domains service, one class per URI template: HTTP only.

Each reads the path, query and body, calls the service (which checks who may, then what),
and sets the media it returns.
"""

from __future__ import annotations

from common.validation import media


class Resource:
    def __init__(self, context):
        self.service = context.service


class Domain(Resource):
    """GET / PUT / DELETE /v1/workspaces/{slug}/domain."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.get(req.context.caller, slug)

    def on_put(self, req, resp, slug):
        resp.media = self.service.set_domain(req.context.caller, slug, media(req))

    def on_delete(self, req, resp, slug):
        resp.media = self.service.remove(req.context.caller, slug)


class DomainVerify(Resource):
    """POST /v1/workspaces/{slug}/domain/verify: check the DNS records now."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.verify_now(req.context.caller, slug)


# -- internal (not routed by the gateway) -------------------------------------------------


class ResolveHost(Resource):
    """GET /internal/domains/resolve?host=...: the gateway asks whose verified domain a Host is."""

    def on_get(self, req, resp):
        resp.media = self.service.resolve_host(req.get_param("host"))
