"""Which webhook URLs may be called: the scheme rule and the SSRF guard.

A URL must be absolute http(s) (https unless WEBHOOK_ALLOW_HTTP), without credentials. Its
host is resolved and *every* address must be public (not loopback, private, link-local,
including the cloud metadata address 169.254.169.254, CGNAT, multicast, reserved or
unspecified), unless the host name, the address or a CIDR containing it is listed in
WEBHOOK_ALLOWED_HOSTS. The guard runs when a URL is registered and again before every
attempt; the sender then connects to the very address it checked (see
:mod:`webhooks.delivery_client`), so a DNS answer that changes in between cannot redirect it.
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


def _why_forbidden(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _why_forbidden(ip.ipv4_mapped)
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
        if host not in self.allowed_names:
            for address in addresses:
                ip = ipaddress.ip_address(address)
                reason = _why_forbidden(ip)
                if reason and not any(ip in net for net in self.allowed_networks):
                    raise UrlRefused(f"resolves to {address}, {reason} address, which webhooks may not call")
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
