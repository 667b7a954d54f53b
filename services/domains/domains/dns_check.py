"""Look a domain's verification records up in DNS (dnspython) and say what is wrong.

A check never raises: every problem, including NXDOMAIN, timeouts and SERVFAIL, becomes
a readable line in ``errors``. ``conclusive`` tells a definite answer ("the record is not
there") from a failed lookup ("could not ask"), so a verified domain is not marked broken
because a nameserver hiccuped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dns.exception
import dns.name
import dns.rcode
import dns.resolver

from domains.config import DomainsConfig
from domains.contract import TXT_PREFIX

MAX_CNAME_HOPS = 8


@dataclass(frozen=True)
class CheckResult:
    errors: list[str] = field(default_factory=list)
    conclusive: bool = True  # False when a lookup timed out or failed (SERVFAIL, refused, ...)

    @property
    def ok(self) -> bool:
        return not self.errors


class LookupFailed(Exception):
    """A lookup that got no usable answer (timeout, SERVFAIL, refused, malformed)."""


def txt_name(domain: str) -> str:
    return f"{TXT_PREFIX}.{domain}"


def _text(name) -> str:
    return name.to_text(omit_final_dot=True).lower()


class DnsChecker:
    def __init__(self, config: DomainsConfig):
        self.config = config

    def resolver(self) -> dns.resolver.Resolver:
        """A fresh resolver per check: no cache, so a fixed record shows at once."""
        c = self.config
        resolver = dns.resolver.Resolver(configure=not c.dns_nameservers)
        if c.dns_nameservers:
            resolver.nameservers = list(c.dns_nameservers)
        resolver.port = c.dns_port
        resolver.timeout = c.dns_timeout
        resolver.lifetime = c.dns_timeout
        resolver.retry_servfail = False
        resolver.cache = None
        return resolver

    def check(self, domain: str, token: str) -> CheckResult:
        resolver = self.resolver()
        errors, conclusive = [], True
        for probe in (self._txt_problem, self._cname_problem):
            try:
                problem = probe(resolver, domain, token)
            except LookupFailed as ex:
                problem, conclusive = str(ex), False
            if problem:
                errors.append(problem)
        return CheckResult(errors, conclusive)

    # -- the two records ----------------------------------------------------------------

    def _txt_problem(self, resolver, domain: str, token: str) -> str | None:
        name = txt_name(domain)
        answer = self._lookup(resolver, name, "TXT")
        if answer is None:
            return f"TXT record {name} not found"
        values = [b"".join(rr.strings).decode(errors="replace") for rr in answer]
        if token in values:
            return None
        found = ", ".join(f'"{v}"' for v in values)
        return f'TXT record {name} holds {found}, expected "{token}"'

    def _cname_problem(self, resolver, domain: str, token: str) -> str | None:
        target = self.config.cname_target
        try:
            answer = self._lookup(resolver, domain, "CNAME", missing_name=True)
        except _NoSuchName:
            return f"{domain} does not exist in DNS (NXDOMAIN): create a CNAME record {domain} pointing to {target}"
        if answer is None:
            # No CNAME: an apex domain may be "flattened" (ALIAS/ANAME) to the target's addresses.
            if self._same_addresses(resolver, domain, target):
                return None
            return f"CNAME record {domain} not found: point it to {target}"
        first = _text(answer[0].target)
        seen, hop = first, 0
        while seen != target and hop < MAX_CNAME_HOPS:
            try:
                nxt = self._lookup(resolver, seen, "CNAME", missing_name=True)
            except _NoSuchName:
                nxt = None
            if nxt is None:
                break
            seen, hop = _text(nxt[0].target), hop + 1
        return None if seen == target else f"CNAME points to {first}, expected {target}"

    def _same_addresses(self, resolver, domain: str, target: str) -> bool:
        mine = self._addresses(resolver, domain)
        return bool(mine) and mine <= self._addresses(resolver, target)

    def _addresses(self, resolver, name: str) -> set[str]:
        try:
            answer = self._lookup(resolver, name, "A", missing_name=True)
        except _NoSuchName:
            return set()
        return {rr.address for rr in answer} if answer is not None else set()

    # -- dnspython, with its failures turned into answers or LookupFailed ------------

    def _lookup(self, resolver, name: str, rdtype: str, missing_name: bool = False):
        """The answer, or None when the record is absent; NXDOMAIN raises _NoSuchName
        if ``missing_name`` (else it is "absent" too); anything else raises LookupFailed."""
        try:
            return resolver.resolve(dns.name.from_text(name), rdtype, search=False)
        except dns.resolver.NXDOMAIN:
            if missing_name:
                raise _NoSuchName(name) from None
            return None
        except dns.resolver.NoAnswer:
            return None
        except dns.exception.Timeout:
            raise LookupFailed(f"DNS lookup of {rdtype} {name} timed out after {self.config.dns_timeout:g}s") from None
        except dns.resolver.NoNameservers as ex:
            raise LookupFailed(f"DNS lookup of {rdtype} {name} failed: {_servfail_reason(ex)}") from None
        except dns.exception.DNSException as ex:
            raise LookupFailed(f"DNS lookup of {rdtype} {name} failed: {ex}") from None


class _NoSuchName(Exception):
    pass


def _servfail_reason(ex: dns.resolver.NoNameservers) -> str:
    for _server, _tcp, _port, _error, answer in ex.kwargs.get("errors", []):
        if answer is not None:
            return f"the nameserver answered {dns.rcode.to_text(answer.rcode())}"
    return "no nameserver could answer"
