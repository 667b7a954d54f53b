"""The domains service's settings, read once from the environment (see docs/services/domains.md)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlsplit

from common.config import Settings, as_list, from_env, load


def _domain_name(value: str) -> str:
    return value.lower().rstrip(".")


@dataclass(frozen=True)
class DomainsConfig:
    # Resolver: empty nameservers means the system's (/etc/resolv.conf, e.g. the cluster DNS).
    dns_nameservers: tuple[str, ...] = from_env("DOMAINS_DNS_NAMESERVERS", (), as_list)
    dns_port: int = from_env("DOMAINS_DNS_PORT", 53, int)
    dns_timeout: float = from_env("DOMAINS_DNS_TIMEOUT", 3.0, float)  # seconds for one lookup, retries included
    # What customers point their domain at (empty: ``domains.<platform_domain>``), and the
    # platform's own domain, never claimable (``load_config``: the host of PUBLIC_BASE_URL).
    cname_target: str = from_env("DOMAINS_CNAME_TARGET", "", _domain_name)
    platform_domain: str = from_env("DOMAINS_PLATFORM_DOMAIN", "feedback.localhost", _domain_name)
    # Re-check worker (seconds).
    check_initial: float = from_env("DOMAINS_CHECK_INITIAL", 30.0, float)  # first retry of a pending/broken domain; doubles per failed check
    check_max: float = from_env("DOMAINS_CHECK_MAX", 900.0, float)  # backoff cap
    pending_timeout: float = from_env("DOMAINS_PENDING_TIMEOUT", 72 * 3600.0, float)  # pending (or broken) this long without success: failed
    recheck_interval: float = from_env("DOMAINS_RECHECK_INTERVAL", 3600.0, float)  # how often a verified domain is checked again
    worker_poll: float = from_env("DOMAINS_WORKER_POLL", 5.0, float)  # how often the worker looks for due checks when idle
    check_concurrency: int = from_env("DOMAINS_CHECK_CONCURRENCY", 8, int)  # DNS checks the worker runs at once

    def __post_init__(self):
        if not self.cname_target:  # frozen: set through object, as dataclasses document
            object.__setattr__(self, "cname_target", f"domains.{self.platform_domain}")


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
    platform = _platform_host(settings.public_base_url) or DomainsConfig.platform_domain
    return load(DomainsConfig, environ, platform_domain=_domain_name(platform))
