"""The web service's own settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, require_strong_secrets, setting

# The built-in cookie key is public (it is in this file): development machines only.
DEV_COOKIE_SECRET = "dev-web-cookie-secret"
# A manager's session is backed by an API key the site derives with the session's lifetime;
# the API grants such keys for 60 s to 24 h.
SESSION_SECONDS_RANGE = (60, 86400)


@dataclass(frozen=True)
class WebConfig:
    # Where the site calls the public API (the gateway); PUBLIC_BASE_URL by default.
    api_url: str = "http://127.0.0.1:8080"
    # Seconds a signed-in session lasts (SSO user or manager); a TTL index removes it after.
    session_seconds: int = 12 * 3600
    # Key of the anonymous visitor cookie's HMAC and of its CSRF tokens: the site's own secret.
    cookie_secret: str = DEV_COOKIE_SECRET
    # Seconds one API call from a page may take.
    api_timeout: float = 10.0
    # Posts per board page.
    page_size: int = 20


def _cookie_secret(settings: Settings, env: Mapping[str, str]) -> str:
    secret = setting(env, "WEB_COOKIE_SECRET", DEV_COOKIE_SECRET)
    require_strong_secrets({"WEB_COOKIE_SECRET": (secret, DEV_COOKIE_SECRET)}, settings.dev_mode)
    if secret == settings.internal_secret and not settings.dev_mode:
        # Whoever holds the site's cookie key must not be able to sign as the gateway.
        raise SystemExit("refusing to start: WEB_COOKIE_SECRET equals INTERNAL_SECRET; give the site a secret of its own")
    return secret


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> WebConfig:
    env = os.environ if environ is None else environ
    seconds = setting(env, "WEB_SESSION_SECONDS", WebConfig.session_seconds, int)
    low, high = SESSION_SECONDS_RANGE
    if not low <= seconds <= high:
        raise SystemExit(f"environment variable WEB_SESSION_SECONDS={seconds} is invalid: it must be between {low} and {high}")
    return WebConfig(
        api_url=setting(env, "WEB_API_URL", settings.public_base_url).rstrip("/"),
        session_seconds=seconds,
        cookie_secret=_cookie_secret(settings, env),
        api_timeout=setting(env, "WEB_API_TIMEOUT", WebConfig.api_timeout, float),
        page_size=setting(env, "WEB_PAGE_SIZE", WebConfig.page_size, int),
    )
