"""Signed HTTP calls between services (and from the gateway) over pooled connections.

Used where a request needs read-your-writes across services, e.g. the gateway asking the
workspaces service who a credential belongs to. Each call says why in its own module.
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode, urlsplit

import urllib3

from common import auth
from common.config import Settings
from common.errors import BadGateway, GatewayTimeout, Unavailable


PATH_SAFE = "/:@!$&'()*+,;=-._~"


class InternalClient:
    def __init__(self, settings: Settings, timeout: float | None = None):
        self.settings = settings
        self.timeout = urllib3.Timeout(connect=settings.proxy_connect_timeout, read=timeout or settings.proxy_read_timeout)
        self._pools: dict[str, tuple[urllib3.HTTPConnectionPool, str]] = {}

    def _pool(self, service: str) -> tuple[urllib3.HTTPConnectionPool, str]:
        """One keep-alive pool per service, so a request skips URL parsing and pool lookup."""
        hit = self._pools.get(service)
        if hit is None:
            base = self.base_url(service)
            pool = urllib3.connection_from_url(base, maxsize=32, block=False, retries=False, timeout=self.timeout)
            hit = self._pools[service] = (pool, urlsplit(base).path.rstrip("/"))
        return hit

    def base_url(self, service: str) -> str:
        url = self.settings.service_url(service)
        if not url:
            raise Unavailable(f"service '{service}' is not configured (set SERVICE_URL_{service.upper()})")
        return url

    def request(
        self,
        service: str,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        query: str = "",
        caller: auth.Caller | None = None,
        headers: dict | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """Send one signed request (with ``headers``: the covered ones among them are signed
        too); map transport failures to 502/503/504."""
        # Sign the decoded path (what the service's router sees); send it percent-encoded.
        pool, prefix = self._pool(service)
        url = prefix + quote(path, safe=PATH_SAFE) + (f"?{query}" if query else "")
        sent = {name: value for name, value in (headers or {}).items() if value is not None}
        signed = auth.signed_headers(self.settings.internal_secret, service, method, path, query, body, caller or auth.Caller(), sent)
        all_headers = {**sent, **signed}
        try:
            return pool.urlopen(method, url, body=body, headers=all_headers, redirect=False, preload_content=True, assert_same_host=False)
        except urllib3.exceptions.ReadTimeoutError:
            raise GatewayTimeout(f"service '{service}' did not answer in time") from None
        except urllib3.exceptions.NewConnectionError:
            raise Unavailable(f"service '{service}' is unavailable") from None
        except urllib3.exceptions.HTTPError as ex:
            raise BadGateway(f"service '{service}' failed: {ex.__class__.__name__}") from None

    def json(self, service: str, method: str, path: str, payload: dict | None = None, params: dict | None = None, caller=None):
        """Send JSON, return ``(status, decoded body)``."""
        body = json.dumps(payload).encode() if payload is not None else None
        r = self.request(
            service, method, path, body=body, query=urlencode(params or {}, doseq=True), caller=caller,
            headers={"Content-Type": "application/json"} if body is not None else None,
        )
        try:
            return r.status, json.loads(r.data or b"null")
        except ValueError:
            raise BadGateway(f"service '{service}' answered with invalid JSON") from None
