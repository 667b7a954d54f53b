"""The gateway app: routes every plugin's /v1 routes to its service, after authentication.

The routing table is built from the discovered plugins (``feedback.plugins`` entry
points); there is no list of services here, and no service code is imported: each route's
methods are declared in its spec. Each public route is proxied over pooled,
time-limited connections to the owning service's URL (``SERVICE_URL_<NAME>``).
"""

from __future__ import annotations

import gzip
from typing import Mapping

import falcon

from common.app import create_app as create_base_app
from common.config import Settings, load_settings
from common import auth
from common.errors import Forbidden, NotFound, PayloadTooLarge, Unauthorized, UriTooLong
from common.ids import SLUG
from common.public_api import CLIENT_HEADER
from common.internal import InternalClient
from common.plugins import Route, ServiceSpec, load_services, sole
from gateway.authn import Authenticator
from gateway.config import GatewayConfig, load_config
from gateway.clients import ClientAddresses
from gateway.limits import COLLECTION_DATABASE, RateLimits, open_storage, request_class
from gateway.hosts import HostRouting
from gateway.openapi import DOCS, DOCUMENT, INDEX, ApiIndex, OpenAPIDocument, build_document

# If-None-Match, and the caching and content headers of the answer: a route serving a file (a
# workspace's logo) answers 304 to a browser whose copy is current, and says how to keep it; a
# download (an export's zip) names the file it saves as (Content-Disposition).
FORWARDED_REQUEST_HEADERS = ("Content-Type", "X-Request-Id", "Accept", "Idempotency-Key", "If-None-Match")
FORWARDED_RESPONSE_HEADERS = ("Content-Type", "Retry-After", "Location", "Allow", "Idempotent-Replayed",
                              "Cache-Control", "ETag", "X-Content-Type-Options", "Content-Security-Policy",
                              "Content-Disposition")
# A site's pages carry what browsers send and need, both ways; hop-by-hop headers never pass.
PAGE_REQUEST_HEADERS = ("Content-Type", "Cookie", "Accept", "Accept-Language", "User-Agent", "Origin", "Referer",
                        "If-None-Match", "If-Modified-Since")
# What a page's answer may carry to the public: the service's internal headers (X-Db-*, and any
# other it may add) and hop-by-hop ones never pass.
PAGE_RESPONSE_HEADERS = frozenset(h.lower() for h in (
    "Content-Type", "Content-Language", "Content-Disposition", "Cache-Control", "Expires", "ETag", "Last-Modified",
    "Vary", "Location", "Set-Cookie", "Retry-After", "Allow", "WWW-Authenticate", "RateLimit", "RateLimit-Policy",
    "Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options", "Permissions-Policy",
    "Strict-Transport-Security", "Cross-Origin-Opener-Policy", "Cross-Origin-Resource-Policy",
    "Mcp-Session-Id", "Mcp-Protocol-Version",
    # A page its service opens to other origins (the widget's API) says which, itself.
    "Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
    "Access-Control-Max-Age", "Access-Control-Expose-Headers",
))
# A page route that lets a CORS preflight's header through (``Route.headers``) answers its
# preflights itself: the gateway forwards its OPTIONS requests to the service, which decides
# which origins it answers (the widget's API: the workspace's ``widgetOrigins``).
PREFLIGHT_HEADER = "Access-Control-Request-Method"
# A page's text goes gzipped to a browser that takes it: the board's HTML and stylesheet shrink
# to about a fifth (docs/benchmarks.md, "Board site: Lighthouse"). Small answers, images and
# streams go as they are.
COMPRESSIBLE = ("text/html", "text/css", "text/javascript", "text/plain", "text/xml", "application/xml",
                "application/json", "application/javascript", "image/svg+xml")
COMPRESS_MIN_BYTES = 1024
COMPRESS_LEVEL = 6
DRAIN_LIMIT = 8 * 1024 * 1024
MAX_URI_LENGTH = 4096


class Proxy:
    """Forward one service's requests to it: after size checks, authentication and rate limits."""

    def __init__(self, service: str, client: InternalClient, authn: Authenticator, limits: RateLimits, clients: ClientAddresses, max_body: int):
        self.service = service
        self.client = client
        self.authn = authn
        self.limits = limits
        self.clients = clients
        self.max_body = max_body

    def forward(self, req: falcon.Request, resp: falcon.Response, route: Route, **params) -> None:
        if len(req.relative_uri) > MAX_URI_LENGTH:
            raise UriTooLong(f"the request URI exceeds {MAX_URI_LENGTH} characters")
        if "slug" in params and not SLUG.match(params["slug"]):
            raise NotFound(f"workspace '{params['slug']}' not found")  # cannot exist: no service is asked
        kind = request_class(route.limits.get(req.method), req.method)
        body = self._read_body(req, route)
        address = self.clients.of(req)
        slug = params.get("slug")
        caller = self._authenticate(req, slug, address)
        if caller.role == auth.READ_KEY and req.method not in ("GET", "HEAD"):
            raise Forbidden("this API key may only read (its role is 'read')")
        own = route.budgets.get(req.method)
        for name, value in self.limits.check(kind, caller, address, slug or caller.workspace, own).items():
            resp.set_header(name, value)
        headers = {h: req.get_header(h) for h in FORWARDED_REQUEST_HEADERS if req.get_header(h)}
        if req.get_header("Idempotency-Key") == "":
            headers["Idempotency-Key"] = ""  # sent on for the service to refuse: a key has 1-255 characters
        headers["X-Request-Id"] = req.context.request_id
        answer = self.client.request(self.service, req.method, req.path, body=body, query=req.query_string, caller=caller, headers=headers)
        resp.status = answer.status
        resp.data = answer.data
        for name in FORWARDED_RESPONSE_HEADERS:
            if name in answer.headers:
                resp.set_header(name, answer.headers[name])

    def _authenticate(self, req: falcon.Request, slug: str | None, address: str) -> auth.Caller:
        """Who is calling; a client that keeps presenting a bad credential is refused for a
        while before it is even checked (no guessing keys at the owner's expense)."""
        credential = self.authn.credential(req)
        if credential:
            self.limits.refuse_if_failing(address, credential, self.authn.known_good(req, slug))
        try:
            return self.authn.caller(req, slug, address)
        except (Unauthorized, Forbidden):
            if credential:
                self.limits.failed(address, credential)
            raise

    def _read_body(self, req: falcon.Request, route: Route) -> bytes | None:
        # A route taking a whole file (an import) names its own limit, in place of the global one.
        limit = route.max_body or self.max_body
        # A chunked body has no Content-Length: gunicorn's input stream ends at its last chunk.
        stream = req.bounded_stream if req.content_length is not None else req.stream
        declared_too_large = req.content_length is not None and req.content_length > limit
        body = b"" if declared_too_large else stream.read(limit + 1)
        if declared_too_large or len(body) > limit:
            _drain(stream)
            raise PayloadTooLarge(f"request body exceeds {limit} bytes")
        return body or None


class PageProxy(Proxy):
    """Forward a site's page requests: cookies and forms in, the page's headers (Set-Cookie,
    security headers, redirects) out. No API credential is authenticated here: the caller is
    anonymous to the site's service, which signs its visitors in with its own cookies, or checks
    a credential the route lets through (``Route.headers``) by calling ``/v1`` with it."""

    def forward(self, req: falcon.Request, resp: falcon.Response, route: Route, **params) -> None:
        if len(req.relative_uri) > MAX_URI_LENGTH:
            raise UriTooLong(f"the request URI exceeds {MAX_URI_LENGTH} characters")
        if "slug" in params and not SLUG.match(params["slug"]):
            raise NotFound(f"workspace '{params['slug']}' not found")
        body = self._read_body(req, route)
        headers = {h: req.get_header(h) for h in (*PAGE_REQUEST_HEADERS, *route.headers) if req.get_header(h)}
        address = self.clients.of(req)
        headers.update(
            {
                "X-Request-Id": req.context.request_id,
                "X-Forwarded-For": address,
                CLIENT_HEADER: self.clients.token(address),
                "X-Forwarded-Proto": req.get_header("X-Forwarded-Proto") or req.scheme,
                "X-Forwarded-Host": req.get_header("X-Forwarded-Host") or req.netloc,  # with its port: a site builds links on it
            }
        )
        answer = self.client.request(self.service, req.method, req.path, body=body, query=req.query_string, headers=headers)
        resp.status = answer.status
        resp.data = answer.data
        for name in {n.lower() for n in answer.headers} & PAGE_RESPONSE_HEADERS:
            for value in answer.headers.getlist(name):
                resp.append_header(name, value)
        if _takes_gzip(req.get_header("Accept-Encoding")):
            # A validator names the content, whatever its coding: weak for every answer to such a
            # client (a 304 included), so the one it keeps matches the one it is sent again.
            etag = resp.get_header("ETag")
            if etag and not etag.startswith("W/"):
                resp.set_header("ETag", "W/" + etag)
            if _compressible(answer.headers.get("Content-Type"), resp.data):
                resp.data = gzip.compress(resp.data, COMPRESS_LEVEL, mtime=0)
                resp.set_header("Content-Encoding", "gzip")
                resp.append_header("Vary", "Accept-Encoding")


def _takes_gzip(accept_encoding: str | None) -> bool:
    """Whether Accept-Encoding lists gzip (or ``*``) without ``q=0``."""
    for item in (accept_encoding or "").lower().split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            q = params.strip()
            return not (q.startswith("q=") and q[2:].strip() in ("0", "0.0", "0.00", "0.000"))
    return False


def _compressible(content_type: str | None, data: bytes | None) -> bool:
    return bool(data) and len(data) >= COMPRESS_MIN_BYTES and (content_type or "").lower().startswith(COMPRESSIBLE)


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

    def responder(self, req, resp, **params):
        proxy.forward(req, resp, route, **params)

    responders = {f"on_{m.lower()}": responder for m in route.methods}
    if isinstance(proxy, PageProxy) and PREFLIGHT_HEADER in route.headers:
        responders["on_options"] = responder
    return type("RouteProxy", (), responders)()


class MetricsOnlyInternally:
    """The gateway's /metrics is not for the public: it answers only on the internal listener
    (``feedback-gateway --metrics-bind``), and 404 on the public one."""

    def __init__(self, port: int | None):
        self.port = str(port) if port else None

    def process_request(self, req, resp):
        if req.path == "/metrics" and req.env.get("SERVER_PORT") != self.port:
            raise NotFound(f"no such path: {req.path}")


def create_app(
    settings: Settings,
    services: Mapping[str, ServiceSpec],
    client: InternalClient | None = None,
    config: GatewayConfig | None = None,
    metrics_port: int | None = None,
) -> falcon.App:
    config = config or load_config()
    client = client or InternalClient(settings)
    storage = open_storage(config.rate_limit_storage or settings.mongodb_uri, settings.db_prefix + COLLECTION_DATABASE)
    limits = RateLimits(config, storage)
    clients = ClientAddresses(config.trusted_proxies, config.gateway_secret)
    # Each declared by one service at most: two declaring one stop the gateway here.
    identity = sole(services, "identity_path") or (None, None)
    authn = Authenticator(settings, client, *identity, gateway_secret=config.gateway_secret)
    resolver = sole(services, "host_resolver_path")
    site = sole(services, "site_root")
    site_root = site[1] if site else None
    hosts = [HostRouting(settings, client, *resolver, site_root=site_root, cache_seconds=config.host_cache_seconds)] if resolver else []
    middleware = [MetricsOnlyInternally(metrics_port), *hosts]
    app = create_base_app("gateway", middleware=middleware)
    document = build_document(settings, services)
    app.add_route(DOCUMENT, OpenAPIDocument(document))
    app.add_route(INDEX, ApiIndex(document, docs=any(p.template == DOCS for s in services.values() for p in s.pages)))
    for name, spec in services.items():
        proxy = Proxy(name, client, authn, limits, clients, settings.max_body_bytes)
        for route in spec.routes:
            app.add_route("/v1" + route.template, proxy_for(route, proxy))
        pages = PageProxy(name, client, authn, limits, clients, settings.max_body_bytes)
        for route in spec.pages:
            app.add_route(route.template, proxy_for(route, pages))
    return app


def get_app(metrics_port: int | None = None) -> falcon.App:
    settings = load_settings()
    return create_app(settings, load_services(), metrics_port=metrics_port)
