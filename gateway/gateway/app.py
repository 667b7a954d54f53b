"""The gateway app: routes every plugin's /v1 routes to its service, after authentication.

The routing table is built from the discovered plugins (``feedback.plugins`` entry
points); there is no list of services here, and no service code is imported: each route's
methods are declared in its spec. Each public route is proxied over pooled,
time-limited connections to the owning service's URL (``SERVICE_URL_<NAME>``).
"""

from __future__ import annotations

from typing import Mapping

import falcon

from common.app import create_app as create_base_app
from common.config import Settings, load_settings
from common.errors import PayloadTooLarge, UriTooLong
from common.internal import InternalClient
from common.plugins import Route, ServiceSpec, load_services
from gateway.authn import Authenticator
from gateway.hosts import HostRouting
from gateway.openapi import OpenAPIDocument, build_document

FORWARDED_REQUEST_HEADERS = ("Content-Type", "X-Request-Id", "Accept")
FORWARDED_RESPONSE_HEADERS = ("Content-Type", "Retry-After", "Location", "Allow")
DRAIN_LIMIT = 8 * 1024 * 1024
MAX_URI_LENGTH = 4096


class Proxy:
    """Forward one route's requests to the service that owns it."""

    def __init__(self, service: str, client: InternalClient, authn: Authenticator, max_body: int):
        self.service = service
        self.client = client
        self.authn = authn
        self.max_body = max_body

    def forward(self, req: falcon.Request, resp: falcon.Response, **params) -> None:
        if len(req.relative_uri) > MAX_URI_LENGTH:
            raise UriTooLong(f"the request URI exceeds {MAX_URI_LENGTH} characters")
        body = self._read_body(req)
        caller = self.authn.caller(req, params.get("slug"))
        headers = {h: req.get_header(h) for h in FORWARDED_REQUEST_HEADERS if req.get_header(h)}
        headers["X-Request-Id"] = req.context.request_id
        answer = self.client.request(self.service, req.method, req.path, body=body, query=req.query_string, caller=caller, headers=headers)
        resp.status = answer.status
        resp.data = answer.data
        for name in FORWARDED_RESPONSE_HEADERS:
            if name in answer.headers:
                resp.set_header(name, answer.headers[name])

    def _read_body(self, req: falcon.Request) -> bytes | None:
        # A chunked body has no Content-Length: gunicorn's input stream ends at its last chunk.
        stream = req.bounded_stream if req.content_length is not None else req.stream
        declared_too_large = req.content_length is not None and req.content_length > self.max_body
        body = b"" if declared_too_large else stream.read(self.max_body + 1)
        if declared_too_large or len(body) > self.max_body:
            _drain(stream)
            raise PayloadTooLarge(f"request body exceeds {self.max_body} bytes")
        return body or None


def _drain(stream, limit: int = DRAIN_LIMIT) -> None:
    """Read and drop what the client is still sending, so it gets our 413 instead of a reset
    connection; past ``limit`` the connection is closed anyway."""
    while limit > 0:
        chunk = stream.read(min(65536, limit))
        if not chunk:
            return
        limit -= len(chunk)


def proxy_for(route: Route, proxy: Proxy) -> object:
    """A Falcon resource with exactly the route's declared methods, so other methods answer 405."""
    responders = {f"on_{m.lower()}": (lambda self, req, resp, **params: proxy.forward(req, resp, **params)) for m in route.methods}
    return type("RouteProxy", (), responders)()


def create_app(settings: Settings, services: Mapping[str, ServiceSpec], client: InternalClient | None = None) -> falcon.App:
    client = client or InternalClient(settings)
    identity = next(((name, s.identity_path) for name, s in services.items() if s.identity_path), (None, None))
    authn = Authenticator(settings, client, *identity)
    resolver = next(((name, s.host_resolver_path) for name, s in services.items() if s.host_resolver_path), None)
    app = create_base_app("gateway", middleware=[HostRouting(settings, client, *resolver)] if resolver else [])
    app.add_route("/v1/openapi.json", OpenAPIDocument(build_document(settings, services)))
    for name, spec in services.items():
        proxy = Proxy(name, client, authn, settings.max_body_bytes)
        for route in spec.routes:
            app.add_route("/v1" + route.template, proxy_for(route, proxy))
    return app


def get_app() -> falcon.App:
    settings = load_settings()
    return create_app(settings, load_services())
