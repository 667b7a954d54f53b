"""The mcp plugin: a Model Context Protocol server over the public API, for agents.

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code (nor the MCP SDK), so ``create_context`` imports what it wires when called.
The service is an ASGI app (``asgi``); the gateway proxies ``/mcp`` to it as a page route
that lets the bearer key and the protocol's headers through, and authenticates nothing
itself there: the service checks the key through ``/v1``, like any API client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl

if TYPE_CHECKING:  # the gateway reads this module: no service code (nor the SDK) at import
    from feedback_mcp.api import ApiClient
    from feedback_mcp.config import McpConfig

# What a Streamable HTTP client sends beyond a page's usual headers.
MCP_HEADERS = ("Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID")
PAGES = [Route("/mcp", "feedback_mcp.resources:McpEndpoint", ("POST",), headers=MCP_HEADERS)]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: McpConfig
    api: ApiClient


def create_context(settings: Settings) -> Context:
    from feedback_mcp.api import ApiClient
    from feedback_mcp.config import load_config

    config = load_config(settings)
    # No database: everything is the API's.
    return Context(settings=settings, store=None, config=config, api=ApiClient(config.api_url, config.api_timeout))


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="mcp",
        context="feedback_mcp.plugin:create_context",
        pages=PAGES,
        asgi="common.asgi:create_service_app",
        commands={"mcp": "feedback_mcp.stdio:main"},
    )
