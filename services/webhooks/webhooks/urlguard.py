"""Which webhook URLs may be called: the scheme rule, the SSRF guard and the port rule.

A URL must be absolute http(s) (https unless WEBHOOK_ALLOW_HTTP), without credentials. Its
host is resolved and *every* address must be public (not loopback, private, link-local,
including the cloud metadata address 169.254.169.254, CGNAT, multicast, reserved or
unspecified; nor an IPv6 form that wraps or may route to such an address: site-local, 6to4,
Teredo, local-use NAT64, and IPv4-mapped, IPv4-compatible or NAT64 addresses around a
non-public IPv4 one). Its port must be 80, 443 or 1024-65535 outside
:data:`INTERNAL_SERVICE_PORTS`. A host name, an address or a CIDR listed in
WEBHOOK_ALLOWED_HOSTS lifts both the address and the port rule for the hosts it covers. The
guard runs when a URL is registered and again before every attempt; the sender then connects
to the very address it checked (see :mod:`webhooks.delivery_client`), so a DNS answer that
changes in between cannot redirect it.
"""

from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from urllib.parse import urlsplit

import dns.exception
import dns.resolver

from webhooks.config import WebhooksConfig

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_LOOKUPS = ThreadPoolExecutor(8, thread_name_prefix="dns")  # system-resolver lookups


class UrlRefused(ValueError):
    """The URL may not be called; the message says why (without the field name)."""


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


# Ports a webhook may not call even on a public address, beyond those below 1024 (only 80 and
# 443 are open there): the well-known ports of services that live inside a network, whose
# answer (or silence) in a delivery log would tell who listens where. (first, last, service).
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
    """Why a webhook may not call ``port`` (without an allowlist entry), or None."""
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


def _why_forbidden(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return _why_forbidden(ip.ipv4_mapped)
        if ip.is_unspecified or ip.is_loopback:
            return "an unspecified" if ip.is_unspecified else "a loopback"
        if ip in _NAT64:
            # An IPv6-only network reaches public IPv4 hosts this way: only what it wraps counts.
            return _why_forbidden(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if ip in _IPV4_COMPATIBLE:
            return _why_forbidden(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)) or "a deprecated IPv4-compatible"
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
    def __init__(self, config: WebhooksConfig):
        self.allow_http = config.allow_http
        self.allowed_names: set[str] = set()
        self.allowed_networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in config.allowed_hosts:
            try:
                self.allowed_networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.allowed_names.add(entry.lower().rstrip("."))
        self.resolver = None
        self.dns_timeout = config.dns_timeout
        if config.dns_server:
            host, _, port = config.dns_server.rpartition(":")
            self.resolver = dns.resolver.Resolver(configure=False)
            self.resolver.nameservers = [host or "127.0.0.1"]
            self.resolver.port = int(port)
            self.resolver.lifetime = config.dns_timeout

    def check(self, url: str) -> Target:
        """Parse, resolve and vet ``url``; raise :class:`UrlRefused` if it may not be called."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as ex:
            raise UrlRefused(f"is not a valid URL ({ex})") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise UrlRefused("must be an absolute http(s) URL")
        if scheme == "http" and not self.allow_http:
            raise UrlRefused("must use https")
        if parts.username is not None or parts.password is not None:
            raise UrlRefused("must not contain credentials")
        host = parts.hostname.lower().rstrip(".")
        port = port or (443 if scheme == "https" else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        addresses = self.resolve(host, port)
        if host in self.allowed_names:
            return Target(scheme, host, port, path, tuple(addresses))
        allowed = [any(ip in net for net in self.allowed_networks) for ip in map(ipaddress.ip_address, addresses)]
        for address, listed in zip(addresses, allowed):
            reason = None if listed else _why_forbidden(ipaddress.ip_address(address))
            if reason:
                raise UrlRefused(f"resolves to {address}, {reason} address, which webhooks may not call")
        reason = None if all(allowed) else why_port_forbidden(port)
        if reason:
            raise UrlRefused(f"uses port {port}, {reason}, which webhooks may not call")
        return Target(scheme, host, port, path, tuple(addresses))

    def resolve(self, host: str, port: int) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        addresses = self._dns(host) if self.resolver is not None else self._system(host, port)
        if not addresses:
            raise UrlRefused(f"host {host} has no address")
        return list(dict.fromkeys(addresses))

    def _system(self, host: str, port: int) -> list[str]:
        # getaddrinfo has no timeout of its own: wait for it at most dns_timeout.
        future = _LOOKUPS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            infos = future.result(timeout=self.dns_timeout)
        except FutureTimeout:
            raise UrlRefused(f"host {host} cannot be resolved (DNS timeout)") from None
        except (socket.gaierror, UnicodeError):
            raise UrlRefused(f"host {host} cannot be resolved") from None
        return [info[4][0].split("%")[0] for info in infos]

    def _dns(self, host: str) -> list[str]:
        found: list[str] = []
        for rtype in ("A", "AAAA"):
            try:
                found += [r.address for r in self.resolver.resolve(host, rtype, search=False)]
            except dns.resolver.NoAnswer:
                continue
            except dns.resolver.NXDOMAIN:
                raise UrlRefused(f"host {host} cannot be resolved (no such name)") from None
            except (dns.exception.DNSException, ValueError):
                raise UrlRefused(f"host {host} cannot be resolved (DNS failure)") from None
        return found
