"""Serve a workspace's public API on its verified custom domain (Host routing).

URL shape: with ``Host: feedback.customer.com`` (a verified custom domain of workspace
``acme``), ``/v1/<rest>`` is served as ``/v1/workspaces/acme/<rest>``: ``GET /v1/posts``,
``GET /v1/branding``, ``GET /v1`` (the workspace itself). A custom domain serves its own
workspace only: a path naming another (``/v1/workspaces/other/...``) is a 404 there, and so
is creating workspaces. Paths naming a workspace are served as they are on any other host,
and ``/v1/openapi.json`` on every host. Any other path of a verified custom domain is the
workspace's site (the service that declares ``site_root``, e.g. ``/b/{slug}``): ``/`` is its
board, ``/posts/x`` its ``/b/acme/posts/x``. The platform's own host
(PUBLIC_BASE_URL), ``localhost``, IP addresses and dotless names are never looked up.

The plugin that declares ``host_resolver_path`` (the domains service) answers which
workspace a host belongs to; answers, "none" included, are cached for HOST_CACHE_SECONDS
(at most CACHE_MAX hosts, the least recently used going first), so a removed or broken
domain stops being served within that time. Failed lookups are not cached.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from typing import Callable
from urllib.parse import urlsplit

from cachetools import TTLCache

from common.app import OPEN_PATHS
from common.config import Settings
from common.errors import FeedbackError, NotFound, Unavailable
from common.internal import InternalClient

log = logging.getLogger(__name__)

CACHE_MAX = 10_000
UNKNOWN = object()  # not in the cache (None is a cached answer: not a custom domain)
PASS_THROUGH = ("/v1/openapi.json",)
WORKSPACES = "/v1/workspaces"


def rewrite(path: str, slug: str) -> str:
    """``/v1/<rest>`` as the workspace path of ``slug``."""
    rest = path[len("/v1") :]
    return f"{WORKSPACES}/{slug}{rest}"


class HostRouting:
    """Falcon middleware: rewrite slug-less /v1 paths on a custom domain before routing."""

    def __init__(self, settings: Settings, client: InternalClient, service: str, path: str, site_root: str | None = None,
                 *, cache_seconds: float, clock: Callable[[], float] = time.monotonic):
        self.site_root = site_root
        self.client = client
        self.service = service
        self.path = path
        self.own = {"localhost", (urlsplit(settings.public_base_url).hostname or "").lower()}
        self._cache = TTLCache(maxsize=CACHE_MAX, ttl=cache_seconds, timer=clock)  # host -> slug or None
        self._lock = threading.Lock()

    def process_request(self, req, resp):
        path = req.path
        api = path == "/v1" or path.startswith("/v1/")
        if path in PASS_THROUGH or path in OPEN_PATHS or not (api or self.site_root):
            return
        host = (req.host or "").lower().rstrip(".")
        if not self.is_custom(host):
            return
        slug = self.slug_of(host)
        if not api:
            if slug is not None:
                root = self.site_root.format(slug=slug)
                if path == root or path.startswith(root + "/"):
                    return
                if path.startswith(self.site_root.split("{slug}")[0]):
                    raise NotFound(f"no such path: {path} ({host} serves workspace '{slug}' only)")
                req.path = root + (path if path != "/" else "")
            return
        if path == WORKSPACES or path.startswith(WORKSPACES + "/"):
            # Served as is on other hosts (e.g. the gateway's in-cluster name); a verified
            # custom domain serves its own workspace only.
            if slug is not None and path[len(WORKSPACES) + 1 :].split("/", 1)[0] != slug:
                raise NotFound(f"no such path: {path} ({host} serves workspace '{slug}' only)")
            return
        if slug is None:
            raise NotFound(f"no such path: {path} ({host} is not a verified custom domain)")
        req.path = rewrite(path, slug)

    def is_custom(self, host: str) -> bool:
        if not host or "." not in host or host in self.own:
            return False
        try:
            ipaddress.ip_address(host.strip("[]"))
            return False
        except ValueError:
            return True

    def slug_of(self, host: str) -> str | None:
        """The workspace whose verified custom domain ``host`` is, or None."""
        with self._lock:
            slug = self._cache.get(host, UNKNOWN)
        if slug is UNKNOWN:
            slug = self._ask(host)
            with self._lock:
                self._cache[host] = slug
        return slug

    def _ask(self, host: str) -> str | None:
        try:
            status, body = self.client.json(self.service, "GET", self.path, params={"host": host})
        except FeedbackError as ex:
            log.warning("custom domain lookup of %s failed: %s", host, ex.message)
            raise Unavailable("custom domain lookup is unavailable, try again shortly", headers={"Retry-After": "1"}) from None
        if status == 200 and isinstance(body, dict) and isinstance(body.get("slug"), str):
            return body["slug"]
        if status == 404:
            return None
        log.warning("custom domain lookup of %s answered %s", host, status)
        raise Unavailable("custom domain lookup is unavailable, try again shortly", headers={"Retry-After": "1"})
