"""The MCP service's own settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, setting


@dataclass(frozen=True)
class McpConfig:
    # Where the tools call the public API (the gateway); PUBLIC_BASE_URL by default.
    api_url: str = "http://127.0.0.1:8080"
    # Seconds one API call of a tool may take.
    api_timeout: float = 10.0
    # Seconds the HTTP transport remembers what a bearer key is (its workspace and role);
    # AUTH_CACHE_SECONDS by default, the gateway's own bound on a revoked key.
    key_cache_seconds: float = 10.0
    # Most posts the changelog prompt reads (pages of 100, newest first) for its material.
    stats_max_posts: int = 1000


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> McpConfig:
    env = os.environ if environ is None else environ
    return McpConfig(
        api_url=setting(env, "MCP_API_URL", settings.public_base_url).rstrip("/"),
        api_timeout=setting(env, "MCP_API_TIMEOUT", McpConfig.api_timeout, float),
        key_cache_seconds=setting(env, "MCP_KEY_CACHE_SECONDS", float(settings.auth_cache_seconds), float),
        stats_max_posts=setting(env, "MCP_STATS_MAX_POSTS", McpConfig.stats_max_posts, int),
    )
