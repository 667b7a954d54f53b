"""Settings the stack's domains processes get for the web site's custom-domain test: the
same DNS server and names as the domains service's own tests (so both folders agree)."""

from __future__ import annotations

from services.domains.tests.helpers import CNAME_TARGET, DNS_TIMEOUT, PLATFORM_DOMAIN


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    return {
        "DOMAINS_DNS_NAMESERVERS": "127.0.0.1",
        "DOMAINS_DNS_PORT": str(dns_port),
        "DOMAINS_DNS_TIMEOUT": str(DNS_TIMEOUT),
        "DOMAINS_CNAME_TARGET": CNAME_TARGET,
        "DOMAINS_PLATFORM_DOMAIN": PLATFORM_DOMAIN,
    }
