"""``feedback mcp --base-url URL --api-key KEY``: the MCP server over stdio, for a desktop
assistant that starts it as a subprocess. It needs only the gateway's URL and a key: the
key's workspace and role come from ``GET /v1/api-key``, every tool calls ``/v1`` with it."""

from __future__ import annotations

import argparse
import os
import sys

import anyio

from feedback_mcp.api import ApiClient, ApiError, WorkspaceApi
from feedback_mcp.config import McpConfig
from feedback_mcp.service import error_text
from feedback_mcp.tools import build_server


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="feedback mcp", description=__doc__)
    parser.add_argument("--base-url", default=os.environ.get("FEEDBACK_URL"), help="the gateway's URL, e.g. https://feedback.example.com (or FEEDBACK_URL)")
    parser.add_argument("--api-key", default=os.environ.get("FEEDBACK_API_KEY"), help="a workspace API key (or FEEDBACK_API_KEY, which keeps it out of process lists)")
    parser.add_argument("--timeout", type=float, default=McpConfig.api_timeout, help="seconds one API call may take")
    args = parser.parse_args(argv)
    if not args.base_url or not args.api_key:
        parser.error("--base-url and --api-key (or FEEDBACK_URL and FEEDBACK_API_KEY) are required")
    config = McpConfig(api_url=args.base_url.rstrip("/"), api_timeout=args.timeout)
    client = ApiClient(config.api_url, config.api_timeout)
    try:
        info = client.key_info(args.api_key)
    except ApiError as ex:
        raise SystemExit(f"feedback mcp: the API refused the key: {error_text(ex)}") from None
    print(f"feedback mcp: workspace {info.workspace}, role {info.role}, serving on stdio", file=sys.stderr)
    server = build_server(WorkspaceApi(client, args.api_key, info), config)
    anyio.run(server.run_stdio_async)
