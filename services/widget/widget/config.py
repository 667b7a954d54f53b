"""The widget service's own settings, read once from the environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, as_url, from_env, load


@dataclass(frozen=True)
class WidgetConfig:
    # Where the widget's API calls the public API (the gateway); PUBLIC_BASE_URL by default.
    api_url: str = from_env("WIDGET_API_URL", "http://127.0.0.1:8080", as_url)
    # Seconds one call of the public API may take.
    api_timeout: float = from_env("WIDGET_API_TIMEOUT", 10.0, float)
    # Seconds a workspace's widget settings (its allowed origins) are kept before they are read
    # again: an origin removed in the admin area is refused at most this much later.
    settings_cache_seconds: float = from_env("WIDGET_SETTINGS_CACHE_SECONDS", 10.0, float)


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> WidgetConfig:
    return load(WidgetConfig, environ, api_url=as_url(settings.public_base_url))
