"""Rate limits at the edge: per identity and per client address, for writes, searches and
failed authentications, with the RateLimit-Policy and RateLimit fields of the IETF httpapi
draft on every limited response and a 429 ``{error}`` with Retry-After past the limit.

Which routes are limited, and how, is declared by each service (``Route.limit``): "write"
(creating posts, comments and votes) or "search". Each bucket is a token bucket: a client may
spend its whole quota at once, then one request per ``window / quota`` seconds.

Buckets live in each gateway process: with several processes (gunicorn workers, replicas)
a client whose requests spread over all of them gets up to that many times the quota. The
chart keeps a client on one replica (docs/deployment.md); docs/reliability.md says more.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from common import auth
from common.errors import TooManyRequests
from gateway.config import GatewayConfig, Limit

MAX_BUCKETS = 100_000  # least recently used buckets are dropped past this (memory stays bounded)


@dataclass
class Verdict:
    allowed: bool
    policy: str
    limit: Limit
    remaining: int
    reset: int  # seconds until the bucket is full again (allowed) or holds a token (refused)

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Policy": f'"{self.policy}";q={self.limit.quota};w={_seconds(self.limit.window)}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset}',
        }


class Buckets:
    """Token buckets by key; bounded in number."""

    def __init__(self, clock=time.monotonic, max_keys: int = MAX_BUCKETS):
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: OrderedDict[tuple, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, key: tuple, policy: str, limit: Limit, spend: bool = True) -> Verdict:
        rate = limit.quota / limit.window
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.get(key, (float(limit.quota), now))
            tokens = min(float(limit.quota), tokens + (now - at) * rate)
            allowed = tokens >= 1
            if allowed and spend:
                tokens -= 1
            self._buckets[key] = (tokens, now)
            self._buckets.move_to_end(key)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        if allowed:
            reset = math.ceil((limit.quota - tokens) / rate)  # until the bucket is full again
        else:
            reset = max(1, math.ceil((1 - tokens) / rate))  # until the next request is allowed
        return Verdict(allowed, policy, limit, max(0, math.floor(tokens)), reset)


class RateLimits:
    def __init__(self, config: GatewayConfig, clock=time.monotonic):
        self.config = config
        self.buckets = Buckets(clock)

    def check(self, kind: str | None, caller: auth.Caller, address: str) -> dict[str, str]:
        """Spend one request of ``kind`` ("write", "search" or None) for ``caller`` at
        ``address``; return the RateLimit header fields, or raise 429 with them."""
        if kind is None:
            return {}
        checks = []
        if caller.kind in (auth.MANAGER, auth.ADMIN):
            checks.append((("key", caller.key_id or "operator"), "api-key", self.config.manager_limit))
        else:
            identity = caller.user_id or caller.kind
            per_identity, per_address = (
                (self.config.write_limit, self.config.write_limit_per_address)
                if kind == "write"
                else (self.config.search_limit, self.config.search_limit_per_address)
            )
            checks += [((kind, "id", identity), kind, per_identity), ((kind, "ip", address), f"{kind}-per-address", per_address)]
        verdicts = [self.buckets.take(key, policy, limit) for key, policy, limit in checks if limit.quota > 0]
        if not verdicts:
            return {}
        tightest = min(verdicts, key=lambda v: (v.allowed, v.remaining))
        if not tightest.allowed:
            raise _too_many(tightest, f"too many {kind} requests from this client")
        return tightest.headers()

    def refuse_if_failing(self, address: str) -> None:
        """429 for a client address past its failed authentications (checked before asking who it is)."""
        limit = self.config.auth_failure_limit
        if limit.quota > 0:
            verdict = self.buckets.take(("auth-failure", address), "auth-failures", limit, spend=False)
            if not verdict.allowed:
                raise _too_many(verdict, "too many failed authentications from this address")

    def failed(self, address: str) -> None:
        limit = self.config.auth_failure_limit
        if limit.quota > 0:
            self.buckets.take(("auth-failure", address), "auth-failures", limit)


def client_address(req, trusted: tuple) -> str:
    """The client's address: the peer's, or, when the peer is a trusted proxy, the nearest
    address in X-Forwarded-For that is not a trusted proxy."""
    peer = req.remote_addr or ""
    if not trusted or not _within(peer, trusted):
        return peer
    hops = [h.strip() for h in (req.get_header("X-Forwarded-For") or "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not _within(hop, trusted):
            return hop
    return hops[0] if hops else peer


def _within(address: str, networks: tuple) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def _too_many(verdict: Verdict, message: str) -> TooManyRequests:
    return TooManyRequests(
        f"{message}: try again in {verdict.reset} s", headers={**verdict.headers(), "Retry-After": str(verdict.reset)}
    )


def _seconds(window: float) -> int | float:
    return int(window) if float(window).is_integer() else window
