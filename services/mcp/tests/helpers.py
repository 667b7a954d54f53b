"""Connecting the SDK's own client to the running platform, over either transport."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from pathlib import Path
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TRANSPORTS = ("http", "stdio")
FEEDBACK = str(Path(sys.executable).parent / "feedback")


@asynccontextmanager
async def connect(transport: str, base_url: str, key: str):
    """A connected ``mcp.Client``: Streamable HTTP at the gateway's ``/mcp`` with the key as a
    bearer, or ``feedback mcp`` spawned as a subprocess talking stdio."""
    if transport == "http":
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            async with Client(streamable_http_client(base_url + "/mcp", http_client=http)) as client:
                yield client
    else:
        params = StdioServerParameters(command=FEEDBACK, args=["mcp", "--base-url", base_url], env={"FEEDBACK_API_KEY": key})
        async with Client(params) as client:
            yield client


def session(transport: str, base_url: str, key: str, steps):
    """Run ``await steps(client)`` in one connection; return what it returns."""

    async def run():
        async with connect(transport, base_url, key) as client:
            return await steps(client)

    return anyio.run(run)


def data(result) -> dict:
    """A successful tool call's JSON answer."""
    assert not result.is_error, text(result)
    return result.structured_content if result.structured_content is not None else json.loads(text(result))


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def error(result) -> str:
    """A failed tool call's message (an MCP tool error, not a broken session)."""
    assert result.is_error, f"expected a tool error, got {text(result)[:300]}"
    return text(result)
