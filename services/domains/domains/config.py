"""The domains service's settings, read once from the environment (see docs/services/domains.md)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlsplit

from common.config import Settings, as_list, setting


@dataclass(frozen=True)
class DomainsConfig:
    # Resolver: empty nameservers means the system's (/etc/resolv.conf, e.g. the cluster DNS).
    dns_nameservers: tuple[str, ...] = ()
    dns_port: int = 53
    dns_timeout: float = 3.0  # seconds for one lookup, retries included
    # What customers point their domain at, and the platform's own domain (never claimable).
    cname_target: str = "domains.feedback.localhost"
    platform_domain: str = "feedback.localhost"
    # Re-check worker (seconds).
    check_initial: float = 30.0  # first retry of a pending/broken domain; doubles per failed check
    check_max: float = 900.0  # backoff cap
    pending_timeout: float = 72 * 3600.0  # pending (or broken) this long without success: failed
    recheck_interval: float = 3600.0  # how often a verified domain is checked again
    worker_poll: float = 5.0  # how often the worker looks for due checks when idle
    check_concurrency: int = 8  # DNS checks the worker runs at once


def _platform_host(public_base_url: str) -> str | None:
    host = (urlsplit(public_base_url).hostname or "").lower()
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        return host or None


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> DomainsConfig:
    """The settings from ``environ`` (the process's environment by default); the platform's
    own domain defaults to the host of ``settings.public_base_url``."""
    env = os.environ if environ is None else environ
    d = DomainsConfig
    platform = setting(env, "DOMAINS_PLATFORM_DOMAIN", _platform_host(settings.public_base_url) or d.platform_domain)
    platform = platform.lower().rstrip(".")
    return DomainsConfig(
        dns_nameservers=setting(env, "DOMAINS_DNS_NAMESERVERS", d.dns_nameservers, as_list),
        dns_port=setting(env, "DOMAINS_DNS_PORT", d.dns_port, int),
        dns_timeout=setting(env, "DOMAINS_DNS_TIMEOUT", d.dns_timeout, float),
        cname_target=setting(env, "DOMAINS_CNAME_TARGET", f"domains.{platform}").lower().rstrip("."),
        platform_domain=platform,
        check_initial=setting(env, "DOMAINS_CHECK_INITIAL", d.check_initial, float),
        check_max=setting(env, "DOMAINS_CHECK_MAX", d.check_max, float),
        pending_timeout=setting(env, "DOMAINS_PENDING_TIMEOUT", d.pending_timeout, float),
        recheck_interval=setting(env, "DOMAINS_RECHECK_INTERVAL", d.recheck_interval, float),
        worker_poll=setting(env, "DOMAINS_WORKER_POLL", d.worker_poll, float),
        check_concurrency=setting(env, "DOMAINS_CHECK_CONCURRENCY", d.check_concurrency, int),
    )
