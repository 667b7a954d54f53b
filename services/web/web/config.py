"""The web service's own settings, read once from the environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, as_url, from_env, load, require_strong_secrets

# The built-in cookie key is public (it is in this file): development machines only.
DEV_COOKIE_SECRET = "dev-web-cookie-secret"


@dataclass(frozen=True)
class WebConfig:
    # Where the site calls the public API (the gateway); PUBLIC_BASE_URL by default.
    api_url: str = from_env("WEB_API_URL", "http://127.0.0.1:8080", as_url)
    # Key of the anonymous visitor cookie's HMAC and of every CSRF token: the site's own secret.
    cookie_secret: str = from_env("WEB_COOKIE_SECRET", DEV_COOKIE_SECRET, secret=True)
    # Seconds one API call from a page may take.
    api_timeout: float = from_env("WEB_API_TIMEOUT", 10.0, float)
    # Posts per board page.
    page_size: int = from_env("WEB_PAGE_SIZE", 20, int)


def _check_cookie_secret(secret: str, settings: Settings) -> None:
    require_strong_secrets({"WEB_COOKIE_SECRET": (secret, DEV_COOKIE_SECRET)}, settings.dev_mode)
    if secret == settings.internal_secret and not settings.dev_mode:
        # Whoever holds the site's cookie key must not be able to sign as the gateway.
        raise SystemExit("refusing to start: WEB_COOKIE_SECRET equals INTERNAL_SECRET; give the site a secret of its own")


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> WebConfig:
    config = load(WebConfig, environ, api_url=as_url(settings.public_base_url))
    _check_cookie_secret(config.cookie_secret, settings)
    return config
