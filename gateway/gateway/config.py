"""The gateway's own settings, read once from the environment (the README's configuration table)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Mapping

from common.config import as_list, from_env, load


DEV_GATEWAY_SECRET = "dev-gateway-secret"


@dataclass(frozen=True)
class Limit:
    """At most ``quota`` requests per ``window`` seconds (a token bucket: bursts up to the quota)."""

    quota: int
    window: float

    @classmethod
    def parse(cls, text: str) -> "Limit":
        """``"30/60"``: 30 per 60 seconds; ``"0/60"`` turns the limit off."""
        quota, _, window = text.partition("/")
        limit = cls(int(quota), float(window or 60))
        if limit.quota < 0 or limit.window <= 0:
            raise ValueError("a limit is QUOTA/SECONDS with QUOTA >= 0 and SECONDS > 0")
        return limit


def _networks(value: str) -> tuple:
    return tuple(ipaddress.ip_network(part, strict=False) for part in as_list(value))


EVERY_ROUTE = "*"  # RATE_LIMIT_ROUTES' entry without a name: every route budget it does not name


def _route_limits(value: str) -> tuple[tuple[str, Limit], ...]:
    """``"triage-saves=3/60"``: that route budget (``common.plugins.Budget``) at 3 per 60 s;
    ``"0/60"``: every one off; entries separated by commas."""
    entries = []
    for part in as_list(value):
        name, _, limit = part.rpartition("=")
        entries.append((name.strip() or EVERY_ROUTE, Limit.parse(limit.strip())))
    return tuple(entries)


@dataclass(frozen=True)
class GatewayConfig:
    # Peers whose X-Forwarded-For is believed (the ingress or load balancer in front of the
    # gateway). From anyone else the header is ignored and the peer address is the client's.
    trusted_proxies: tuple = from_env("TRUSTED_PROXIES", (), _networks)
    # Writes (create post, comment, vote and unvote) per identity (API key, SSO user or
    # anonymous visitor), and per client address (anonymous and SSO callers together).
    write_limit: Limit = from_env("RATE_LIMIT_WRITES", Limit(30, 60), Limit.parse)
    write_limit_per_address: Limit = from_env("RATE_LIMIT_WRITES_PER_ADDRESS", Limit(60, 60), Limit.parse)
    # Similarity searches (typed as the title is written) per identity and per address.
    search_limit: Limit = from_env("RATE_LIMIT_SEARCHES", Limit(120, 60), Limit.parse)
    search_limit_per_address: Limit = from_env("RATE_LIMIT_SEARCHES_PER_ADDRESS", Limit(600, 60), Limit.parse)
    # Reads (every GET) per identity, per address, and per workspace (all its readers together,
    # so one tenant's crowd or crawler cannot starve the others).
    read_limit: Limit = from_env("RATE_LIMIT_READS", Limit(600, 60), Limit.parse)
    read_limit_per_address: Limit = from_env("RATE_LIMIT_READS_PER_ADDRESS", Limit(1200, 60), Limit.parse)
    read_limit_per_workspace: Limit = from_env("RATE_LIMIT_READS_PER_WORKSPACE", Limit(30000, 60), Limit.parse)
    # Requests with a manager API key or the operator token (integrations, importers).
    manager_limit: Limit = from_env("RATE_LIMIT_API_KEYS", Limit(1200, 60), Limit.parse)
    # Failed authentications with one credential from one client address; past it that
    # credential is refused from that address until the window has passed.
    auth_failure_limit: Limit = from_env("RATE_LIMIT_AUTH_FAILURES", Limit(20, 300), Limit.parse)
    # Failed authentications with any credential from one client address; past it only
    # credentials already known to be good are served from that address.
    auth_failure_limit_per_address: Limit = from_env("RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS", Limit(100, 300), Limit.parse)
    # The budgets routes declare of their own (`Route.budgets`: a triage save, which rescores a
    # whole workspace), changed or turned off: `name=QUOTA/SECONDS`, or `QUOTA/SECONDS` for all.
    route_limits: tuple = from_env("RATE_LIMIT_ROUTES", (), _route_limits)
    # Where every gateway process counts budgets: a storage URI of the `limits` library
    # (mongodb://, redis://, memcached://, memory:// for one process); empty: MONGODB_URI.
    rate_limit_storage: str = from_env("RATE_LIMIT_STORAGE", "")
    # How often each gateway process sends the budgets it counted to that store and reads back
    # every process's counts; a request waits for the store only near its budget's end (or the
    # first of a window here). 0: every request counts in the store before it is answered.
    rate_limit_sync_seconds: float = from_env("RATE_LIMIT_SYNC_SECONDS", 0.2, float)
    # The gateway's own key (no other process holds it): it signs the client address handed to
    # a front service (the board site, the MCP server), which sends it back on its /v1 calls,
    # and keys anonymous visitors' ids; a purpose-bound key is derived from it for each.
    gateway_secret: str = from_env("GATEWAY_SECRET", DEV_GATEWAY_SECRET, secret=True)
    # How long the gateway remembers which workspace a custom domain serves (or that it serves
    # none): a removed or broken domain stops being served within it.
    host_cache_seconds: float = from_env("HOST_CACHE_SECONDS", 10.0, float)

    def route_limit(self, name: str, quota: int, window: float) -> Limit:
        """A route's own budget: ``RATE_LIMIT_ROUTES``' entry for ``name``, else its entry for
        every route, else what the route declares."""
        given = dict(self.route_limits)
        return given.get(name) or given.get(EVERY_ROUTE) or Limit(quota, window)


def load_config(environ: Mapping[str, str] | None = None) -> GatewayConfig:
    return load(GatewayConfig, environ)
