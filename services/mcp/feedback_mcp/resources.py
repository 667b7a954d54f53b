"""The HTTP side: ``POST /mcp``, the Streamable HTTP transport, as a page of the kit's ASGI app
(``common.asgi``: the gateway's signature, request ids, metrics, ``{"error"}`` refusals, health).

Stateless, JSON responses: every POST is one JSON-RPC exchange answered with
``application/json``, no session is kept between requests, so any API process can answer any
request and nothing needs sharing across pods. A request carries ``Authorization: Bearer
<workspace API key>``; the key's workspace and role come from ``GET /v1/api-key`` (through the
gateway), and the MCP server built for them (``tools.build_server``) is kept per key for
``MCP_KEY_CACHE_SECONDS`` (``KeyServers``). Every ``/v1`` call made while answering a request
carries the client token the gateway signed for it (``X-Feedback-Client``, unchanged), through
the context variable ``api.CLIENT_TOKEN``."""

from __future__ import annotations

import threading

import anyio.to_thread
from cachetools import TTLCache, cachedmethod
from mcp.server.transport_security import TransportSecuritySettings

from common.asgi import forward
from common.errors import Unauthorized
from common.public_api import CLIENT_HEADER
from feedback_mcp.api import CLIENT_TOKEN, WorkspaceApi
from feedback_mcp.tools import FeedbackServer, build_server

# Keys whose server one process keeps; past it the least recently used is dropped (and rebuilt,
# one /v1/api-key call, when that key comes back).
SERVERS_MAX = 10_000
# The gateway is the public entry and every request must carry a bearer key, which no browser
# attaches on its own: the SDK's Host/Origin checks (DNS rebinding) would only refuse the
# gateway's own forwarding.
NO_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


class KeyServers:
    """The MCP server of each key this process has seen lately: bounded, least recently used
    dropped first, each forgotten ``key_cache_seconds`` after it was built (a revoked key's or a
    changed role's server does not outlive that)."""

    def __init__(self, context):
        self.context = context
        self._servers: TTLCache[str, FeedbackServer] = TTLCache(maxsize=SERVERS_MAX, ttl=context.config.key_cache_seconds)
        self._lock = threading.Lock()  # requests look keys up from several threads

    @cachedmethod(lambda self: self._servers, lock=lambda self: self._lock)
    def get(self, key: str) -> FeedbackServer:
        """The server of ``key``; ApiError (the API's refusal) for anything but a workspace key."""
        info = self.context.api.key_info(key)
        return build_server(WorkspaceApi(self.context.api, key, info), self.context.config)


class McpEndpoint:
    """``POST /mcp``: authenticate the key, then let the SDK answer with that key's server."""

    def __init__(self, context):
        self.servers = KeyServers(context)

    async def on_post(self, req, resp):
        key = bearer_key(req.get_header("Authorization"))
        # Set before the key check: a wrong key counts against the agent's address, not ours.
        client = CLIENT_TOKEN.set(req.get_header(CLIENT_HEADER))
        try:
            server = await anyio.to_thread.run_sync(self.servers.get, key)  # an ApiError is the kit's to answer
            # The SDK's own ASGI app for this one exchange. Its lifespan (the session manager's
            # run(), which may be entered once per app) is held around the request, so the tasks
            # it starts live inside this request's task and see only this request's CLIENT_TOKEN.
            sdk = server.streamable_http_app(json_response=True, stateless_http=True, transport_security=NO_HOST_CHECK)
            async with sdk.router.lifespan_context(sdk):
                await forward(req, resp, sdk, req.context.body)
        finally:
            CLIENT_TOKEN.reset(client)


def bearer_key(authorization: str | None) -> str:
    """The key of ``Authorization: Bearer <key>``; 401 without one."""
    scheme, _, key = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("send a workspace API key as 'Authorization: Bearer <key>'", headers={"WWW-Authenticate": "Bearer"})
    return key.strip()
