"""The MCP service's own settings, read once from the environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, as_url, from_env, load


@dataclass(frozen=True)
class McpConfig:
    # Where the tools call the public API (the gateway); PUBLIC_BASE_URL by default.
    api_url: str = from_env("MCP_API_URL", "http://127.0.0.1:8080", as_url)
    # Seconds one API call of a tool may take.
    api_timeout: float = from_env("MCP_API_TIMEOUT", 10.0, float)
    # Seconds the HTTP transport remembers what a bearer key is (its workspace and role);
    # AUTH_CACHE_SECONDS by default, the gateway's own bound on a revoked key.
    key_cache_seconds: float = from_env("MCP_KEY_CACHE_SECONDS", 10.0, float)
    # Most posts the changelog prompt reads (pages of 100, newest first) for its material.
    stats_max_posts: int = from_env("MCP_STATS_MAX_POSTS", 1000, int)


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> McpConfig:
    return load(
        McpConfig,
        environ,
        api_url=as_url(settings.public_base_url),
        key_cache_seconds=float(settings.auth_cache_seconds),
    )
