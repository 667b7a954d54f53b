"""The webhooks service's own settings, read once from the environment.

Documented in docs/services/webhooks.md (section "Settings").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import as_bool, as_list, from_env, load, positive


@dataclass(frozen=True)
class WebhooksConfig:
    # Destinations
    allow_http: bool = from_env("WEBHOOK_ALLOW_HTTP", False, as_bool)  # plain http URLs (https is required otherwise)
    allowed_hosts: tuple[str, ...] = from_env("WEBHOOK_ALLOWED_HOSTS", (), as_list)  # host names, IPs or CIDRs the SSRF guard lets through
    dns_server: str | None = from_env("WEBHOOK_DNS_SERVER", None)  # "host:port" of the resolver to use; None: the system's
    dns_timeout: float = from_env("WEBHOOK_DNS_TIMEOUT", 3.0, positive(float))
    # Delivery
    timeout: float = from_env("WEBHOOK_TIMEOUT_SECONDS", 15.0, positive(float))  # seconds per attempt (connect + response)
    retry_scale: float = from_env("WEBHOOK_RETRY_SCALE", 1.0, positive(float))  # multiplies every retry delay (tests shrink the schedule)
    concurrency: int = from_env("WEBHOOK_CONCURRENCY", 16, positive(int))  # attempts in flight per dispatcher process
    # Attempts in flight to one endpoint per dispatcher process: a slow or hostile receiver
    # holds at most this many sender threads, whatever its backlog.
    endpoint_concurrency: int = from_env("WEBHOOK_ENDPOINT_CONCURRENCY", 4, positive(int))
    poll_seconds: float = from_env("WEBHOOK_POLL_SECONDS", 0.2, positive(float))  # how often an idle dispatcher looks for due retries
    disable_after: float = from_env("WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 86400, positive(float))  # an endpoint failing without a success this long is disabled
    rotation_window: float = from_env("WEBHOOK_ROTATION_WINDOW_SECONDS", 24 * 3600, positive(float))  # an old secret keeps signing this long after a rotation
    max_endpoints: int = from_env("WEBHOOK_MAX_ENDPOINTS", 50, positive(int))  # per workspace

    @property
    def lease(self) -> float:
        """How long a claimed attempt is reserved before another dispatcher may take it over."""
        return 2 * self.timeout + 5


def load_config(environ: Mapping[str, str] | None = None) -> WebhooksConfig:
    return load(WebhooksConfig, environ)
