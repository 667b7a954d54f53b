"""The kit's ASGI app factory: Falcon's ``falcon.asgi.App`` with the same middleware, errors and
endpoints as the WSGI kit (``common.app``), for a front service that serves ASGI (the MCP server).

A front service is a client of ``/v1`` serving people or agents: the gateway proxies its pages
(``ServiceSpec.pages``) and signs each request; the service calls the API back with its user's
own identity. When such a service needs an event loop (an SDK that is an ASGI app), its spec
says ``asgi="common.asgi:create_service_app"`` and this module builds its app:

- **Caller verification** (``InternalAuth``): only requests the gateway signed for this
  service pass (401 otherwise), as in every service; the verified caller is
  ``req.context.caller`` and the request body, read once to check it, ``req.context.body``
  (the stream is spent: a resource reads the body there).
- **Request ids** (``X-Request-Id`` carried or made, echoed back) and **metrics**
  (``feedback_http_requests_total{app=<service>}``, ``feedback_http_request_seconds``): the WSGI
  kit's own middleware, which Falcon's ASGI app awaits through its ``*_async`` methods.
- **One error shape**: the WSGI kit's serializer, so every refusal is ``{"error": "..."}``; the
  kit's domain errors (``common.errors``) and an API refusal (``common.public_api.ApiError``:
  the ``/v1`` call a front service made was refused) map to their status once, here.
- ``/healthz``, ``/readyz`` (the context's optional ``readiness()`` checks) and ``/metrics``.
- The spec's **pages**, each a Falcon ASGI resource built with the service's context.

A page may hand its request to another ASGI app, e.g. an SDK's Starlette app, with
``forward(req, resp, app, body)``: the app sees the request as the client sent it (same path,
headers and body) and its answer becomes the response, after the kit's checks and under its
metrics. The answer is collected whole, so it fits request/response exchanges (the MCP server's
stateless JSON mode), not a long-lived event stream. Such an app's lifespan is its owner's to
run: Falcon's app answers the server's lifespan protocol itself (``process_startup`` /
``process_shutdown`` middleware), and the MCP endpoint runs its SDK app's lifespan around each
request (``feedback_mcp.resources``).
"""

from __future__ import annotations

import asyncio
from typing import Callable, Iterable

import falcon
import falcon.asgi

from common import app as wsgi_kit
from common import auth
from common.config import Settings
from common.errors import FeedbackError, PayloadTooLarge, Unauthorized
from common.plugins import ServiceContext, ServiceSpec, resolve
from common.public_api import ApiError

OPEN_PATHS = wsgi_kit.OPEN_PATHS
# Response headers an ASGI app sends that Falcon sets itself from the body it is given.
FRAMING_HEADERS = {"content-length", "transfer-encoding"}


class RequestId(wsgi_kit.RequestId):
    """The WSGI kit's request ids, for either kind of app."""

    async def process_request_async(self, req, resp):
        self.process_request(req, resp)

    async def process_response_async(self, req, resp, resource, req_succeeded):
        self.process_response(req, resp, resource, req_succeeded)


class Metrics(wsgi_kit.Metrics):
    """The WSGI kit's request metrics, for either kind of app."""

    async def process_response_async(self, req, resp, resource, req_succeeded):
        self.process_response(req, resp, resource, req_succeeded)


class InternalAuth(wsgi_kit.InternalAuth):
    """The WSGI kit's check of the gateway's signature, on an ASGI request: accept only what the
    gateway (or a sibling service) signed for this service, each signature once in this process;
    expose the caller and the body it covered."""

    async def process_request_async(self, req, resp):
        if req.path in OPEN_PATHS:
            return
        body = await read_body(req, self.max_body)
        headers = {h: req.get_header(h) for h in auth.SIGNED_REQUEST_HEADERS}
        if not auth.verify(self.secret, self.service, req.method, req.path, req.query_string, body, headers, nonces=self.nonces):
            raise Unauthorized("requests must come through the gateway")
        req.context.caller = auth.Caller.from_header(headers[auth.CALLER_HEADER])
        req.context.body = body


async def read_body(req, limit: int) -> bytes:
    """The whole request body; 413 past ``limit`` bytes, whether the client announced its length
    or not (a chunked body is read up to one byte past the limit, never further)."""
    if (req.content_length or 0) > limit:
        raise PayloadTooLarge(f"request body exceeds {limit} bytes")
    data = await req.stream.read(limit + 1)
    if len(data) > limit:
        raise PayloadTooLarge(f"request body exceeds {limit} bytes")
    return data


# Falcon's ASGI app awaits its error handlers: the WSGI kit's, awaited (the same mapping).
async def _handle_feedback_error(req, resp, ex: FeedbackError, params, ws=None):
    wsgi_kit._handle_feedback_error(req, resp, ex, params)


async def _handle_api_error(req, resp, ex: ApiError, params, ws=None):
    wsgi_kit._handle_api_error(req, resp, ex, params)


async def _handle_unexpected(req, resp, ex: Exception, params, ws=None):
    wsgi_kit._handle_unexpected(req, resp, ex, params)


class Health(wsgi_kit.Health):
    async def on_get(self, req, resp):
        super().on_get(req, resp)


class Ready(wsgi_kit.Ready):
    async def on_get(self, req, resp):
        # The checks may block (a socket, a database ping): off the event loop.
        await asyncio.to_thread(super().on_get, req, resp)


class MetricsEndpoint(wsgi_kit.MetricsEndpoint):
    async def on_get(self, req, resp):
        super().on_get(req, resp)


def create_app(
    name: str,
    middleware: list | None = None,
    checks: dict[str, Callable[[], None]] | None = None,
    required_checks: Iterable[str] = (),
) -> falcon.asgi.App:
    """A Falcon ASGI app with the platform's JSON, errors, request ids, health and metrics."""
    app = falcon.asgi.App(middleware=[RequestId(), Metrics(name), *(middleware or [])])
    app.req_options.media_handlers[falcon.MEDIA_JSON] = wsgi_kit.JSON
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = wsgi_kit.JSON
    app.req_options.strip_url_path_trailing_slash = True
    app.set_error_serializer(wsgi_kit._serialize_http_error)
    # Most specific class wins (Falcon picks by MRO), so order here does not matter.
    app.add_error_handler(Exception, _handle_unexpected)
    app.add_error_handler(FeedbackError, _handle_feedback_error)
    app.add_error_handler(ApiError, _handle_api_error)
    app.add_route("/healthz", Health())
    app.add_route("/readyz", Ready(checks or {}, required_checks))
    app.add_route("/metrics", MetricsEndpoint())
    return app


def create_service_app(settings: Settings, spec: ServiceSpec, context: ServiceContext | None = None) -> falcon.asgi.App:
    """A front service's ASGI app from its spec (``ServiceSpec.asgi``): its pages, each resource
    built with the service's context, behind the gateway's signature. It keeps no database, so
    it is ready when alive, unless its context names ``readiness()`` checks."""
    context = context if context is not None else spec.create_context(settings)
    context.start_api()
    warming = context.readiness() if hasattr(context, "readiness") else {}
    verification = InternalAuth(settings.internal_secret, spec.name, settings.max_body_bytes)
    app = create_app(spec.name, middleware=[verification], checks=warming, required_checks=warming)
    for route in spec.pages:
        app.add_route(route.template, resolve(route.resource)(context))
    return app


async def forward(req, resp, app, body: bytes) -> None:
    """Answer ``req`` with what the ASGI ``app`` answers to it: the same scope (method, path,
    headers, query), ``body`` as the request's body; its status, headers and body, collected
    whole, become ``resp``'s. An app that answers nothing is a 500 (``{"error"}``, logged)."""
    start: dict | None = None
    chunks: list[bytes] = []
    delivered = False

    async def receive():
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # The body was all there is; the client's disconnect is Falcon's to watch. An app that
        # listens for it waits until it is done (its own tasks are cancelled when it returns).
        await asyncio.Event().wait()

    async def send(message):
        nonlocal start
        if message["type"] == "http.response.start":
            start = message
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    # A copy (an app may write into its scope), with the headers as Falcon read them: the server's
    # may be an iterator, spent once read.
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in req.headers.items()]
    await app({**req.scope, "headers": headers}, receive, send)
    if start is None:
        raise RuntimeError(f"{app!r} answered {req.method} {req.path} with nothing")
    resp.status = start["status"]
    for name, value in start.get("headers", ()):
        if name.decode("latin-1").lower() not in FRAMING_HEADERS:
            resp.append_header(name.decode("latin-1"), value.decode("latin-1"))
    resp.data = b"".join(chunks)
