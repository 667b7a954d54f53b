"""The Streamable HTTP transport at ``/mcp``: an ASGI app (gunicorn's ASGI worker runs it,
``feedback serve mcp``), proxied by the gateway as a page route that lets the bearer key and
the protocol's headers through.

Stateless, JSON responses: every POST is one JSON-RPC exchange answered with
``application/json``, no session is kept between requests, so any API process can answer any
request and nothing needs sharing across pods. Each request must come signed by the gateway
(like every service's) and carry ``Authorization: Bearer <workspace API key>``; the key's
workspace and role come from ``GET /v1/api-key`` (through the gateway), remembered for
``MCP_KEY_CACHE_SECONDS``. Every ``/v1`` call made while answering a request carries the client
token the gateway signed for it (``X-Feedback-Client``, unchanged). Refusals are the platform's
``{"error": "..."}``."""

from __future__ import annotations

import json
import threading
import time

import anyio.to_thread
from cachetools import TTLCache
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from common import auth
from common.app import LATENCY, REQUESTS
from common.config import Settings
from common.plugins import ServiceSpec
from common.public_api import CLIENT_HEADER
from feedback_mcp.api import CLIENT_TOKEN, ApiError, WorkspaceApi
from feedback_mcp.tools import FeedbackServer, build_server

# Keys whose server one process keeps; past it the least recently used is dropped (and rebuilt,
# one /v1/api-key call, when that key comes back).
SERVERS_MAX = 10_000
# The gateway is the public entry and every request must carry a bearer key, which no browser
# attaches on its own: the SDK's Host/Origin checks (DNS rebinding) would only refuse the
# gateway's own forwarding.
NO_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


async def send_json(send, status: int, body: dict, headers: tuple = ()) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers]})
    await send({"type": "http.response.body", "body": data})


class McpEndpoint:
    """``POST /mcp``: authenticate the key, then let the SDK answer with that key's server."""

    def __init__(self, context):
        self.context = context
        self._servers: TTLCache[str, FeedbackServer] = TTLCache(maxsize=SERVERS_MAX, ttl=context.config.key_cache_seconds)
        self._lock = threading.Lock()
        self._nonces = auth.Nonces()  # one endpoint per worker process: the process's memory

    async def __call__(self, scope, receive, send) -> None:
        started = time.perf_counter()
        status = 500

        async def counting_send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._answer(scope, receive, counting_send)
        finally:
            REQUESTS.labels("mcp", scope["method"], "/mcp", status).inc()
            LATENCY.labels("mcp", scope["method"], "/mcp").observe(time.perf_counter() - started)

    async def _answer(self, scope, receive, send) -> None:
        body = await read_body(receive, self.context.settings.max_body_bytes)
        if body is None:
            return await send_json(send, 413, {"error": f"request body exceeds {self.context.settings.max_body_bytes} bytes"})
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        signed = {h: headers.get(h.lower()) for h in auth.SIGNED_REQUEST_HEADERS}
        query = scope.get("query_string", b"").decode("latin-1")
        if not auth.verify(self.context.settings.internal_secret, "mcp", scope["method"], scope["path"], query, body, signed,
                           nonces=self._nonces):
            return await send_json(send, 401, {"error": "requests must come through the gateway"})
        scheme, _, key = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            return await send_json(send, 401, {"error": "send a workspace API key as 'Authorization: Bearer <key>'"},
                                   ((b"www-authenticate", b"Bearer"),))
        # Set before the key check: a wrong key counts against the agent's address, not ours.
        client = CLIENT_TOKEN.set(headers.get(CLIENT_HEADER.lower()))
        try:
            try:
                server = await anyio.to_thread.run_sync(self._server_for, key.strip())
            except ApiError as ex:
                return await send_json(send, ex.status, {"error": ex.message})
            # NOTE: a fresh stateless manager per request (its run() may be entered once), over the
            # key's cached server; the SDK keeps its low-level server on a private attribute. Its
            # tasks start inside this call, so they inherit this request's CLIENT_TOKEN.
            manager = StreamableHTTPSessionManager(app=server._lowlevel_server, json_response=True, stateless=True, security_settings=NO_HOST_CHECK)
            async with manager.run():
                await manager.handle_request(scope, replay(body), send)
        finally:
            CLIENT_TOKEN.reset(client)

    def _server_for(self, key: str) -> FeedbackServer:
        with self._lock:
            server = self._servers.get(key)
        if server is not None:
            return server
        info = self.context.api.key_info(key)  # raises ApiError for anything but a workspace key
        server = build_server(WorkspaceApi(self.context.api, key, info), self.context.config)
        with self._lock:
            self._servers[key] = server
        return server


async def read_body(receive, limit: int) -> bytes | None:
    """The whole request body, or None past ``limit`` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def replay(body: bytes):
    """An ASGI ``receive`` that hands the already-read body to the SDK, then waits for disconnect."""
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()

    return receive


async def health(request) -> Response:
    return JSONResponse({"status": "ok"})


async def metrics(request) -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def create_app(settings: Settings, spec: ServiceSpec) -> Starlette:
    """The service's ASGI app (``ServiceSpec.asgi``): ``/mcp`` and the health endpoints. It keeps
    no database, so ready is alive."""
    context = spec.create_context(settings)
    endpoint = McpEndpoint(context)
    return Starlette(routes=[
        Route("/healthz", health),
        Route("/readyz", health),
        Route("/metrics", metrics),
        Route("/mcp", endpoint, methods=["POST"]),
    ])
