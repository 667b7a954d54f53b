"""The web service's own settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, setting


@dataclass(frozen=True)
class WebConfig:
    # Where the site calls the public API (the gateway); PUBLIC_BASE_URL by default.
    api_url: str = "http://127.0.0.1:8080"
    # Seconds a signed-in session lasts (SSO user or manager); a TTL index removes it after.
    session_seconds: int = 12 * 3600
    # Key of the anonymous visitor cookie's HMAC; INTERNAL_SECRET by default.
    cookie_secret: str = ""
    # Seconds one API call from a page may take.
    api_timeout: float = 10.0
    # Posts per board page.
    page_size: int = 20


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> WebConfig:
    env = os.environ if environ is None else environ
    return WebConfig(
        api_url=setting(env, "WEB_API_URL", settings.public_base_url).rstrip("/"),
        session_seconds=setting(env, "WEB_SESSION_SECONDS", WebConfig.session_seconds, int),
        cookie_secret=setting(env, "WEB_COOKIE_SECRET", settings.internal_secret),
        api_timeout=setting(env, "WEB_API_TIMEOUT", WebConfig.api_timeout, float),
        page_size=setting(env, "WEB_PAGE_SIZE", WebConfig.page_size, int),
    )
