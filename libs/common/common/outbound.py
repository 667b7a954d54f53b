"""Outbound HTTP to URLs that users name: one guard for every such fetch.

Some services fetch URLs that a workspace's people chose: the webhook sender posts to a
receiver, the people service reads an OpenID Connect provider's discovery document, its keys and
its token endpoint. Each such URL could aim at the platform's own network (a database, another
service's internal port, the cloud metadata address) or hold a thread for as long as it likes.
This module is the one way to reach them:

**The policy** (:class:`UrlPolicy`, :meth:`UrlPolicy.check`). A URL must be absolute http(s)
(https unless ``allow_http``), without credentials. Its host is resolved and *every* address
must be public: not loopback, private, link-local (including the cloud metadata address
169.254.169.254), CGNAT, multicast, reserved or unspecified; nor an IPv6 form that wraps or may
route to such an address (site-local, 6to4, Teredo, local-use NAT64, and IPv4-mapped,
IPv4-compatible or NAT64 addresses around a non-public IPv4 one). Its port must be 80, 443 or
1024-65535 outside :data:`INTERNAL_SERVICE_PORTS`. A host name, an address or a CIDR listed in
``allowed_hosts`` lifts both the address and the port rule for the hosts it covers. A refusal
names why, ending "which <purpose> may not call" (the caller names its purpose).

**The client** (:class:`OutboundClient`). It connects to the very address the policy checked
(sending the URL's host in ``Host`` and, for https, as the TLS server name the certificate must
match), so a DNS answer that changes between check and connect cannot turn it inward. It follows
redirects only when asked, at most ``max_redirects`` hops, each hop checked again like the first
(a redirect to an internal address is refused; credentials are not carried to another origin).
The whole exchange, redirects included, has one wall-clock deadline: a read timeout only bounds
each wait for a byte, so a watchdog shuts the socket down when the deadline passes, and a server
dripping its answer cannot hold the thread. At most ``max_bytes`` of an answer are read: a larger
one is refused (or, for callers that only want the status, dropped). Every transport failure is a
:class:`FetchError` with a coarse text (a timeout, a failed connection, a TLS error), never the
exception's own words, which would tell the caller what listens where.

The sockets are urllib3's, the resolver the system's or dnspython's (``dns_server``, tests).
"""

from __future__ import annotations

import ipaddress
import json as jsonlib
import socket
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlencode, urljoin, urlsplit

import dns.exception
import dns.resolver
import urllib3

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_LOOKUPS = ThreadPoolExecutor(8, thread_name_prefix="dns")  # system-resolver lookups


class UrlRefused(ValueError):
    """The URL may not be called; the message says why (a predicate of "the URL ...")."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as written in the URL (lower case, IPv6 without brackets)
    port: int
    path: str  # path and query, at least "/"
    addresses: tuple[str, ...]  # resolved and allowed, in resolver order

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return self.scheme, self.host, self.port


# Ports no URL may name even on a public address, beyond those below 1024 (only 80 and 443 are
# open there): the well-known ports of services that live inside a network, whose answer (or
# silence) would tell who listens where. (first, last, service).
INTERNAL_SERVICE_PORTS: tuple[tuple[int, int, str], ...] = (
    (1080, 1080, "SOCKS proxy"),
    (1433, 1434, "SQL Server"),
    (1521, 1521, "Oracle"),
    (2049, 2049, "NFS"),
    (2181, 2181, "ZooKeeper"),
    (2375, 2376, "Docker engine"),
    (2379, 2380, "etcd"),
    (2888, 2888, "ZooKeeper peers"),
    (3306, 3306, "MySQL"),
    (3389, 3389, "remote desktop"),
    (3888, 3888, "ZooKeeper elections"),
    (4369, 4369, "Erlang port mapper"),
    (5432, 5432, "PostgreSQL"),
    (5601, 5601, "Kibana"),
    (5672, 5672, "AMQP"),
    (5900, 5900, "VNC"),
    (5984, 5984, "CouchDB"),
    (6379, 6380, "Redis"),
    (6443, 6443, "Kubernetes API"),
    (7000, 7001, "Cassandra peers"),
    (7199, 7199, "Cassandra JMX"),
    (8001, 8001, "kubectl proxy"),
    (8086, 8086, "InfluxDB"),
    (8200, 8201, "Vault"),
    (8300, 8302, "Consul RPC and gossip"),
    (8500, 8502, "Consul API"),
    (8600, 8600, "Consul DNS"),
    (9042, 9042, "Cassandra"),
    (9090, 9090, "Prometheus"),
    (9092, 9094, "Kafka"),
    (9100, 9100, "node exporter"),
    (9200, 9200, "Elasticsearch"),
    (9300, 9300, "Elasticsearch transport"),
    (9901, 9901, "Envoy admin"),
    (10248, 10259, "kubelet and Kubernetes control plane"),
    (11211, 11211, "memcached"),
    (15000, 15021, "service-mesh sidecar"),
    (15090, 15090, "service-mesh metrics"),
    (15672, 15672, "RabbitMQ management"),
    (27017, 27019, "MongoDB"),
)
OPEN_LOW_PORTS = (80, 443)
FIRST_OPEN_PORT = 1024


def why_port_forbidden(port: int) -> str | None:
    """Why ``port`` may not be called (without an allowlist entry), or None."""
    if port in OPEN_LOW_PORTS:
        return None
    if port < FIRST_OPEN_PORT:
        return "a port below 1024 other than 80 and 443"
    for first, last, service in INTERNAL_SERVICE_PORTS:
        if first <= port <= last:
            return f"the port of an internal service ({service})"
    return None


# IPv6 ranges that Python's ipaddress (3.11) counts as global but that reach, or may route to,
# addresses inside a network: each is refused whatever it wraps.
_UNROUTED_V6 = (
    (ipaddress.IPv6Network("fec0::/10"), "a site-local"),  # deprecated, still routed inside some sites
    (ipaddress.IPv6Network("2002::/16"), "a 6to4"),  # its relay reaches the wrapped IPv4, private or not
    (ipaddress.IPv6Network("2001::/32"), "a Teredo"),  # likewise, through a Teredo relay
    (ipaddress.IPv6Network("64:ff9b:1::/48"), "a local-use NAT64"),  # a site's own translator: inside by definition
)
# Forms that carry an IPv4 address in their last 32 bits and reach it: judged by that address.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix, what DNS64 synthesises
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated; a host may still route it to IPv4


def why_address_forbidden(ip: IPAddress) -> str | None:
    """What kind of non-public address ``ip`` is ("a loopback", "a private", ...), or None
    when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return why_address_forbidden(ip.ipv4_mapped)
        if ip.is_unspecified or ip.is_loopback:
            return "an unspecified" if ip.is_unspecified else "a loopback"
        if ip in _NAT64:
            # An IPv6-only network reaches public IPv4 hosts this way: only what it wraps counts.
            return why_address_forbidden(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if ip in _IPV4_COMPATIBLE:
            return why_address_forbidden(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)) or "a deprecated IPv4-compatible"
        for network, reason in _UNROUTED_V6:
            if ip in network:
                return reason
    for reason, test in (
        ("an unspecified", ip.is_unspecified),
        ("a loopback", ip.is_loopback),
        ("a link-local", ip.is_link_local),
        ("a multicast", ip.is_multicast),
        ("a private", ip.is_private),
        ("a reserved", ip.is_reserved),
    ):
        if test:
            return reason
    return None if ip.is_global else "a non-public"


class UrlPolicy:
    """Which URLs may be called (see the module's docstring).

    ``allowed_hosts``: host names, addresses or CIDRs let through whatever they resolve to and
    on any port. ``dns_server``: "host:port" of the DNS server to resolve with (the tests'),
    else the system's resolver. ``purpose`` ends a refusal: "... which <purpose> may not call".
    ``http_setting``: the setting that allows plain http (for local development), named in the
    refusal of an ``http://`` URL so whoever meets it knows what to set.
    """

    def __init__(self, *, allow_http: bool = False, allowed_hosts: tuple[str, ...] | list[str] = (),
                 dns_server: str | None = None, dns_timeout: float = 3.0, purpose: str = "this service",
                 http_setting: str | None = None):
        self.allow_http = allow_http
        self.purpose = purpose
        self.http_setting = http_setting
        self.allowed_names: set[str] = set()
        self.allowed_networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allowed_hosts:
            try:
                self.allowed_networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.allowed_names.add(entry.lower().rstrip("."))
        self.resolver = None
        self.dns_timeout = dns_timeout
        if dns_server:
            host, _, port = dns_server.rpartition(":")
            self.resolver = dns.resolver.Resolver(configure=False)
            self.resolver.nameservers = [host or "127.0.0.1"]
            self.resolver.port = int(port)
            self.resolver.lifetime = dns_timeout

    def check(self, url: str, timeout: float | None = None) -> Target:
        """Parse, resolve and vet ``url``; raise :class:`UrlRefused` if it may not be called.
        ``timeout`` bounds the resolution below the policy's own DNS timeout."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as ex:
            raise UrlRefused(f"is not a valid URL ({ex})") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise UrlRefused("must be an absolute http(s) URL")
        if scheme == "http" and not self.allow_http:
            where = f" (plain http is allowed only where {self.http_setting} is set, for local development)"
            raise UrlRefused("must use https" + (where if self.http_setting else ""))
        if parts.username is not None or parts.password is not None:
            raise UrlRefused("must not contain credentials")
        host = parts.hostname.lower().rstrip(".")
        port = port or (443 if scheme == "https" else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        addresses = self.resolve(host, port) if timeout is None else self.resolve(host, port, timeout)
        if host in self.allowed_names:
            return Target(scheme, host, port, path, tuple(addresses))
        allowed = [any(ip in net for net in self.allowed_networks) for ip in map(ipaddress.ip_address, addresses)]
        for address, listed in zip(addresses, allowed):
            reason = None if listed else why_address_forbidden(ipaddress.ip_address(address))
            if reason:
                raise UrlRefused(f"resolves to {address}, {reason} address, which {self.purpose} may not call")
        reason = None if all(allowed) else why_port_forbidden(port)
        if reason:
            raise UrlRefused(f"uses port {port}, {reason}, which {self.purpose} may not call")
        return Target(scheme, host, port, path, tuple(addresses))

    def resolve(self, host: str, port: int, timeout: float | None = None) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        wait = self.dns_timeout if timeout is None else max(min(self.dns_timeout, timeout), 0.001)
        addresses = self._dns(host, wait) if self.resolver is not None else self._system(host, port, wait)
        if not addresses:
            raise UrlRefused(f"host {host} has no address")
        return list(dict.fromkeys(addresses))

    def _system(self, host: str, port: int, wait: float) -> list[str]:
        # getaddrinfo has no timeout of its own: wait for it at most ``wait``.
        future = _LOOKUPS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            infos = future.result(timeout=wait)
        except FutureTimeout:
            raise UrlRefused(f"host {host} cannot be resolved (DNS timeout)") from None
        except (socket.gaierror, UnicodeError):
            raise UrlRefused(f"host {host} cannot be resolved") from None
        return [info[4][0].split("%")[0] for info in infos]

    def _dns(self, host: str, wait: float) -> list[str]:
        found: list[str] = []
        for rtype in ("A", "AAAA"):
            try:
                found += [r.address for r in self.resolver.resolve(host, rtype, search=False, lifetime=wait)]
            except dns.resolver.NoAnswer:
                continue
            except dns.resolver.NXDOMAIN:
                raise UrlRefused(f"host {host} cannot be resolved (no such name)") from None
            except (dns.exception.DNSException, ValueError):
                raise UrlRefused(f"host {host} cannot be resolved (DNS failure)") from None
        return found


# -- fetching -------------------------------------------------------------------------------


class FetchError(Exception):
    """No usable answer. ``str()`` is a coarse text, safe to show to whoever named the URL."""


class Refused(FetchError):
    """The URL, or a redirect's, is refused by the policy: nothing was sent to it."""

    def __init__(self, reason: str, redirected: bool = False):
        self.reason = reason
        self.redirected = redirected
        super().__init__(f"refused: redirected to a URL that {reason}" if redirected else f"refused: the URL {reason}")


class TimedOut(FetchError):
    def __init__(self, timeout: float):
        super().__init__(f"timeout: no complete answer within {timeout:g}s")


class ConnectionFailed(FetchError):
    def __init__(self):
        super().__init__("connection failed")


class TlsError(FetchError):
    def __init__(self):
        super().__init__("TLS error")


class TooLarge(FetchError):
    def __init__(self, max_bytes: int):
        super().__init__(f"the answer is larger than {max_bytes} bytes")


class TooManyRedirects(FetchError):
    def __init__(self, hops: int):
        super().__init__(f"more than {hops} redirects")


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]  # case-insensitive (urllib3's HTTPHeaderDict)
    body: bytes  # empty when the caller asked to drop it
    url: str  # the URL that answered (the last hop's)
    duration_ms: int

    def json(self) -> Any:
        """The body as JSON; ValueError if it is not."""
        return jsonlib.loads(self.body.decode("utf-8"))


REDIRECTS = (301, 302, 303, 307, 308)
CONNECT_TIMEOUT = 10.0  # at most, per connection (less when the deadline is nearer)
MAX_POOLS = 256
_current = threading.local()  # the exchange a thread is making, for its connections to join


class _Exchange:
    """One exchange's connection, which its watchdog cuts at the deadline."""

    def __init__(self):
        self.connection = None
        self.cut = False
        self._lock = threading.Lock()

    def attach(self, connection) -> None:
        with self._lock:
            self.connection = connection
            cut = self.cut
        if cut:  # the deadline passed between two hops: send nothing more
            raise OSError("deadline passed")

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
    """A connection that tells the current exchange it is the one in use."""

    def request(self, *args, **kwargs):
        current = getattr(_current, "exchange", None)
        if current is not None:
            current.attach(self)
        return super().request(*args, **kwargs)


class WatchedHTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class WatchedHTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


class OutboundClient:
    """HTTP to URLs under a :class:`UrlPolicy`: each exchange within ``timeout`` seconds (wall
    clock, redirects included), answers of at most ``max_bytes``. Keeps a keep-alive pool per
    (scheme, address, port, host); safe to share between threads."""

    def __init__(self, policy: UrlPolicy, *, timeout: float = 10.0, max_bytes: int = 256 * 1024,
                 user_agent: str | None = None, pool_size: int = 4, max_redirects: int = 3):
        self.policy = policy
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.pool_size = pool_size
        self.max_redirects = max_redirects
        self._pools: OrderedDict[tuple, urllib3.HTTPConnectionPool] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, url: str, **options) -> Answer:
        return self.request("GET", url, **options)

    def post(self, url: str, **options) -> Answer:
        return self.request("POST", url, **options)

    def request(self, method: str, url: str, *, headers: Mapping[str, str] | None = None, body: bytes | None = None,
                form: Mapping[str, str] | None = None, json: Any = None, follow_redirects: bool = False,
                timeout: float | None = None, max_bytes: int | None = None, drop_body: bool = False) -> Answer:
        """Send ``method`` to ``url`` (with ``body``, or ``form`` url-encoded, or ``json``) and
        read the answer; raise :class:`FetchError` without a usable one. A 3xx is the answer
        unless ``follow_redirects``. ``drop_body``: only the status matters (a larger answer is
        cut short rather than refused, and a broken body is no error)."""
        timeout = timeout or self.timeout
        max_bytes = max_bytes or self.max_bytes
        sent = {"Accept-Encoding": "identity"}
        if self.user_agent:
            sent["User-Agent"] = self.user_agent
        if form is not None:
            body, sent["Content-Type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        elif json is not None:
            body, sent["Content-Type"] = jsonlib.dumps(json).encode(), "application/json"
        sent.update(headers or {})
        exchange = _Exchange()
        outer, _current.exchange = getattr(_current, "exchange", None), exchange
        watchdog = threading.Timer(timeout, exchange.expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            return self._exchange(exchange, method, url, sent, body, follow_redirects, timeout, max_bytes, drop_body)
        finally:
            watchdog.cancel()
            _current.exchange = outer

    def _exchange(self, exchange: _Exchange, method: str, url: str, headers: dict, body: bytes | None,
                  follow_redirects: bool, timeout: float, max_bytes: int, drop_body: bool) -> Answer:
        started = time.monotonic()
        deadline = started + timeout
        hops = 0
        first_origin = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or exchange.cut:
                raise TimedOut(timeout)
            try:
                target = self.policy.check(url, timeout=remaining)
            except UrlRefused as ex:
                raise Refused(str(ex), redirected=hops > 0) from None
            if first_origin is None:
                first_origin = target.origin
            elif target.origin != first_origin:
                # Credentials meant for one origin are not handed to another.
                headers = {k: v for k, v in headers.items() if k.lower() not in ("authorization", "cookie")}
            response = self._send(exchange, target, method, headers, body, deadline, timeout)
            location = response.headers.get("Location")
            if follow_redirects and response.status in REDIRECTS and location:
                response.close()
                response.release_conn()
                hops += 1
                if hops > self.max_redirects:
                    raise TooManyRedirects(self.max_redirects)
                url = urljoin(url, location.strip())
                if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                    method, body = "GET", None
                    headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
                continue
            data = self._read(exchange, response, timeout, max_bytes, drop_body)
            return Answer(response.status, response.headers, data, url, int((time.monotonic() - started) * 1000))

    def _send(self, exchange: _Exchange, target: Target, method: str, headers: dict, body: bytes | None,
              deadline: float, timeout: float) -> urllib3.BaseHTTPResponse:
        """The answer's head from the first of the checked addresses that takes the connection."""
        all_headers = {**headers, "Host": target.host_header}
        for address in target.addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or exchange.cut:
                raise TimedOut(timeout)
            pool = self._pool(target.scheme, address, target.port, target.host)
            try:
                return pool.urlopen(
                    method, target.path, body=body, headers=all_headers, redirect=False, retries=False,
                    timeout=urllib3.Timeout(connect=min(remaining, CONNECT_TIMEOUT), read=remaining),
                    preload_content=False, assert_same_host=False,
                )
            except urllib3.exceptions.NewConnectionError:
                # Before the timeouts: urllib3 makes it a subclass of ConnectTimeoutError, though a
                # refused or unreachable connection did not wait for anything. The next address.
                if exchange.cut:
                    raise TimedOut(timeout) from None
                continue
            except (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ConnectTimeoutError):
                raise TimedOut(timeout) from None
            except urllib3.exceptions.SSLError:
                if exchange.cut:
                    raise TimedOut(timeout) from None
                raise TlsError() from None
            except (urllib3.exceptions.HTTPError, OSError):
                if exchange.cut:
                    raise TimedOut(timeout) from None
                raise ConnectionFailed() from None
        raise ConnectionFailed()

    @staticmethod
    def _read(exchange: _Exchange, response: urllib3.BaseHTTPResponse, timeout: float, max_bytes: int,
              drop_body: bool) -> bytes:
        try:
            length = response.headers.get("Content-Length", "")
            if not drop_body and length.strip().isdigit() and int(length) > max_bytes:
                response.close()  # said at once: nothing to read
                raise TooLarge(max_bytes)
            data = response.read(max_bytes + 1, decode_content=False)
            if exchange.cut:  # the watchdog's shutdown may look like the answer's end: it is not
                response.close()
                raise TimedOut(timeout)
            if len(data) > max_bytes:
                response.close()  # an oversized answer: drop the connection rather than drain it
                if not drop_body:
                    raise TooLarge(max_bytes)
            return b"" if drop_body else data
        except (urllib3.exceptions.HTTPError, OSError):
            response.close()
            if exchange.cut:
                raise TimedOut(timeout) from None
            if drop_body:
                return b""
            raise ConnectionFailed() from None
        finally:
            response.release_conn()

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
