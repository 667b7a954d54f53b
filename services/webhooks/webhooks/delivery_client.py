"""The delivery HTTP client: one POST per attempt, through the platform's outbound-fetch guard.

:class:`common.outbound.OutboundClient` does the work: it checks the URL again, connects to the
checked address itself (sending the URL's host in ``Host`` and, for https, as the TLS server
name that the certificate must match), never follows redirects (a 3xx is a failed attempt),
reads at most MAX_RESPONSE_BYTES of the answer (the rest is dropped) and cuts the attempt at
its wall-clock deadline (WEBHOOK_TIMEOUT_SECONDS for the whole exchange: a receiver dripping
its answer one byte at a time, each inside a read timeout, cannot hold a sender thread). Here
every failure becomes an outcome instead of an exception, with the guard's coarse error (a
timeout, a failed connection, a TLS error, or the URL's refusal): never the exception's text,
which would tell whoever reads the delivery log what listens at an address and port.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from common.outbound import FetchError, OutboundClient
from webhooks.contract import MAX_RESPONSE_BYTES, MAX_RETRY_AFTER, USER_AGENT
from webhooks.urlguard import UrlPolicy


@dataclass(frozen=True)
class Response:
    status: int | None  # None: no HTTP answer (refused URL, timeout, connection error)
    error: str | None
    duration_ms: int
    retry_after: float | None = None  # seconds, from a 429/503 answer's Retry-After

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP-date), capped; None if absent."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(int(value))
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(timezone.utc)).total_seconds()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class DeliveryClient:
    def __init__(self, policy: UrlPolicy, timeout: float, pool_size: int):
        self.policy = policy
        self.timeout = timeout
        self.http = OutboundClient(policy, timeout=timeout, max_bytes=MAX_RESPONSE_BYTES, user_agent=USER_AGENT,
                                   pool_size=pool_size, max_redirects=0)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Response:
        started = time.perf_counter()

        def elapsed() -> int:
            return int((time.perf_counter() - started) * 1000)

        try:
            answer = self.http.post(url, body=body, headers={**headers, "Content-Type": "application/json"},
                                    drop_body=True)
        except FetchError as ex:
            return Response(None, str(ex), elapsed())
        retry_after = parse_retry_after(answer.headers.get("Retry-After")) if answer.status in (429, 503) else None
        return Response(answer.status, None, elapsed(), retry_after)

    def close(self) -> None:
        self.http.close()
