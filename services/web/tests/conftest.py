"""Settings the stack's domains processes get for the web site's custom-domain test: the
same DNS server and names as the domains service's own tests (so both folders agree)."""

from __future__ import annotations

from services.domains.tests.helpers import dns_settings

# The browser tests' fixtures (chromium through Playwright), for every test module of the site.
from .browsing import browser, page  # noqa: F401


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    # The webhooks page's tests deliver to a receiver on 127.0.0.1 over plain http (as the
    # webhooks service's own tests do).
    return {**dns_settings(dns_port), "WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}
