"""The webhooks service's own settings, read once from the environment.

Documented in docs/services/webhooks.md (section "Settings").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from common.config import as_bool, as_list, setting


def positive(convert):
    def check(raw: str):
        value = convert(raw)
        if value <= 0:
            raise ValueError("must be positive")
        return value

    return check


@dataclass(frozen=True)
class WebhooksConfig:
    # Destinations
    allow_http: bool = False  # plain http URLs (https is required otherwise)
    allowed_hosts: tuple[str, ...] = ()  # host names, IPs or CIDRs the SSRF guard lets through
    dns_server: str | None = None  # "host:port" of the resolver to use; None: the system's
    dns_timeout: float = 3.0
    # Delivery
    timeout: float = 15.0  # seconds per attempt (connect + response)
    retry_scale: float = 1.0  # multiplies every retry delay (tests shrink the schedule)
    concurrency: int = 16  # attempts in flight per dispatcher process
    # Attempts in flight to one endpoint per dispatcher process: a slow or hostile receiver
    # holds at most this many sender threads, whatever its backlog.
    endpoint_concurrency: int = 4
    poll_seconds: float = 0.2  # how often an idle dispatcher looks for due retries
    disable_after: float = 5 * 86400  # an endpoint failing without a success this long is disabled
    rotation_window: float = 24 * 3600  # an old secret keeps signing this long after a rotation
    max_endpoints: int = 50  # per workspace

    @property
    def lease(self) -> float:
        """How long a claimed attempt is reserved before another dispatcher may take it over."""
        return 2 * self.timeout + 5


def load_config(environ: Mapping[str, str] | None = None) -> WebhooksConfig:
    env = os.environ if environ is None else environ
    d = WebhooksConfig
    return WebhooksConfig(
        allow_http=setting(env, "WEBHOOK_ALLOW_HTTP", d.allow_http, as_bool),
        allowed_hosts=setting(env, "WEBHOOK_ALLOWED_HOSTS", d.allowed_hosts, as_list),
        dns_server=setting(env, "WEBHOOK_DNS_SERVER", d.dns_server),
        dns_timeout=setting(env, "WEBHOOK_DNS_TIMEOUT", d.dns_timeout, positive(float)),
        timeout=setting(env, "WEBHOOK_TIMEOUT_SECONDS", d.timeout, positive(float)),
        retry_scale=setting(env, "WEBHOOK_RETRY_SCALE", d.retry_scale, positive(float)),
        concurrency=setting(env, "WEBHOOK_CONCURRENCY", d.concurrency, positive(int)),
        endpoint_concurrency=setting(env, "WEBHOOK_ENDPOINT_CONCURRENCY", d.endpoint_concurrency, positive(int)),
        poll_seconds=setting(env, "WEBHOOK_POLL_SECONDS", d.poll_seconds, positive(float)),
        disable_after=setting(env, "WEBHOOK_DISABLE_AFTER_SECONDS", d.disable_after, positive(float)),
        rotation_window=setting(env, "WEBHOOK_ROTATION_WINDOW_SECONDS", d.rotation_window, positive(float)),
        max_endpoints=setting(env, "WEBHOOK_MAX_ENDPOINTS", d.max_endpoints, positive(int)),
    )
