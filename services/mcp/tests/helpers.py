"""Connecting the SDK's own client to the running platform, over either transport; a proxy that
counts the API requests the stdio server makes; reading a prompt's fenced data."""

from __future__ import annotations

import json
import threading
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
import sys

import anyio
import httpx2
import requests
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


FENCE_OPEN, FENCE_CLOSE = "<feedback-data>", "</feedback-data>"


def fenced_data(prompt: str):
    """The JSON a prompt fences, once the fence is checked: opened once, closed once, on the
    prompt's last line, so nothing inside could have ended it early."""
    assert prompt.count(FENCE_OPEN) == 1 and prompt.count(FENCE_CLOSE) == 1, prompt
    notice, rest = prompt.split(FENCE_OPEN + "\n")
    body, after = rest.split("\n" + FENCE_CLOSE)
    assert after == "" and "data" in notice and "instructions" in notice
    return json.loads(body)


class CountingProxy:
    """An HTTP proxy on 127.0.0.1 to the platform that remembers each request's method and path:
    the stdio server pointed at it makes every API call through it."""

    def __init__(self, upstream: str):
        self.seen: list[tuple[str, str]] = []
        proxy = self

        class Forward(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self):
                proxy.seen.append((self.command, self.path))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                headers = {h: v for h, v in self.headers.items() if h.lower() not in ("host", "content-length", "connection")}
                r = requests.request(self.command, upstream + self.path, data=body, headers=headers, timeout=30, allow_redirects=False)
                self.send_response(r.status_code)
                self.send_header("Content-Type", r.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
