"""The delivery HTTP client: one POST per attempt, to the address the URL guard approved.

It connects to the checked IP itself (sending the URL's host in ``Host`` and, for https,
as the TLS server name that the certificate must match), never follows redirects, reads at
most MAX_RESPONSE_BYTES of the answer, and turns every transport failure into an outcome
instead of an exception, with a coarse error: a timeout, a failed connection or a TLS error.
Connection pools are kept per (scheme, address, port, host).

A read timeout bounds each wait for a byte, not the answer: a receiver that drips one byte
just inside it would hold a sender thread for as long as it likes. So each attempt also has a
wall-clock deadline (WEBHOOK_TIMEOUT_SECONDS for the whole exchange): a watchdog shuts the
attempt's socket down when it passes, and the attempt fails as a timeout.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

import urllib3

from webhooks.contract import MAX_RESPONSE_BYTES, MAX_RETRY_AFTER, USER_AGENT
from webhooks.urlguard import UrlPolicy, UrlRefused

MAX_POOLS = 256
# What an attempt without an HTTP answer records, and all it records: the exception's text (a
# refused connection, a reset, a banner that is not HTTP, a certificate's names) would tell
# whoever reads the delivery log what listens at an address and port.
TIMED_OUT = "timeout: no complete answer within {:g}s"
CONNECTION_FAILED = "connection failed"
TLS_ERROR = "TLS error"
_attempt = threading.local()  # the attempt a sender thread is making, for its connection to join


class Attempt:
    """One attempt's connection, which its watchdog cuts at the deadline."""

    def __init__(self):
        self.connection = None
        self.cut = False
        self._lock = threading.Lock()

    def expire(self) -> None:
        with self._lock:
            self.cut = True
            sock = getattr(self.connection, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked read at once
            except OSError:
                pass


class _Watched:
    """A connection that tells the current attempt it is the one in use."""

    def request(self, *args, **kwargs):
        current = getattr(_attempt, "current", None)
        if current is not None:
            current.connection = self
        return super().request(*args, **kwargs)


class WatchedHTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class WatchedHTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


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
        self.pool_size = pool_size
        self._pools: OrderedDict[tuple, urllib3.HTTPConnectionPool] = OrderedDict()
        self._lock = threading.Lock()

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Response:
        attempt = _attempt.current = Attempt()
        watchdog = threading.Timer(self.timeout, attempt.expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            response = self._post(url, body, headers)
        finally:
            watchdog.cancel()
            _attempt.current = None
        if attempt.cut:
            return Response(None, TIMED_OUT.format(self.timeout), response.duration_ms)
        return response

    def _post(self, url: str, body: bytes, headers: dict[str, str]) -> Response:
        started = time.perf_counter()

        def done(status=None, error=None, retry_after=None) -> Response:
            return Response(status, error, int((time.perf_counter() - started) * 1000), retry_after)

        try:
            target = self.policy.check(url)
        except UrlRefused as ex:
            return done(error=f"refused: the URL {ex}")
        pool = self._pool(target.scheme, target.addresses[0], target.port, target.host)
        all_headers = {
            **headers,
            "Host": target.host_header,
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
        }
        try:
            r = pool.urlopen(
                "POST",
                target.path,
                body=body,
                headers=all_headers,
                redirect=False,
                retries=False,
                timeout=urllib3.Timeout(connect=min(self.timeout, 10.0), read=self.timeout),
                preload_content=False,
                assert_same_host=False,
            )
        except urllib3.exceptions.NewConnectionError:
            # Before the timeouts: urllib3 makes it a subclass of ConnectTimeoutError, though a
            # refused or unreachable connection did not wait for anything.
            return done(error=CONNECTION_FAILED)
        except (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ConnectTimeoutError):
            return done(error=TIMED_OUT.format(self.timeout))
        except urllib3.exceptions.SSLError:
            return done(error=TLS_ERROR)
        except urllib3.exceptions.HTTPError:
            return done(error=CONNECTION_FAILED)
        try:
            r.read(MAX_RESPONSE_BYTES, decode_content=False)
            if r.read(1, decode_content=False):
                r.close()  # an oversized answer: drop the connection rather than drain it
        except (urllib3.exceptions.HTTPError, OSError):
            r.close()
        finally:
            r.release_conn()
        retry_after = parse_retry_after(r.headers.get("Retry-After")) if r.status in (429, 503) else None
        return done(status=r.status, retry_after=retry_after)

    def _pool(self, scheme: str, address: str, port: int, host: str) -> urllib3.HTTPConnectionPool:
        key = (scheme, address, port, host)
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
                return pool
            options = dict(maxsize=self.pool_size, block=False, retries=False)
            if scheme == "https":
                pool = urllib3.HTTPSConnectionPool(
                    address, port, server_hostname=host, assert_hostname=host, cert_reqs="CERT_REQUIRED", **options
                )
                pool.ConnectionCls = WatchedHTTPSConnection
            else:
                pool = urllib3.HTTPConnectionPool(address, port, **options)
                pool.ConnectionCls = WatchedHTTPConnection
            self._pools[key] = pool
            while len(self._pools) > MAX_POOLS:
                self._pools.popitem(last=False)[1].close()
            return pool

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()
