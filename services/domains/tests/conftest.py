"""The domains tests' DNS server and the settings the stack's domains processes get.

The server starts when this file is imported, i.e. at collection, before the session
``stack`` fixture starts the platform, so the domains API and worker point their resolver
at it (DOMAINS_DNS_*). Check intervals are scaled down so the worker's transitions show
within seconds.
"""

from __future__ import annotations

import uuid

import pytest

from common.testing import STACK_ENV
from local_dns import Zone, start

CNAME_TARGET = "edge.feedback.test"
PLATFORM_DOMAIN = "feedback.test"
DNS_TIMEOUT = 2.0  # generous: answers must not time out on a loaded machine
PENDING_TIMEOUT = 5.0

ZONE = Zone()
SERVER, PORT = start(ZONE)

STACK_ENV.update(
    {
        "DOMAINS_DNS_NAMESERVERS": "127.0.0.1",
        "DOMAINS_DNS_PORT": str(PORT),
        "DOMAINS_DNS_TIMEOUT": str(DNS_TIMEOUT),
        "DOMAINS_CNAME_TARGET": CNAME_TARGET,
        "DOMAINS_PLATFORM_DOMAIN": PLATFORM_DOMAIN,
        "DOMAINS_CHECK_INITIAL": "0.5",
        "DOMAINS_CHECK_MAX": "1",
        "DOMAINS_PENDING_TIMEOUT": str(PENDING_TIMEOUT),
        "DOMAINS_RECHECK_INTERVAL": "1",
        "DOMAINS_WORKER_POLL": "0.2",
    }
)


@pytest.fixture
def zone() -> Zone:
    return ZONE


@pytest.fixture
def domain(zone):
    """A fresh customer domain name; its records are removed afterwards."""
    name = f"fb-{uuid.uuid4().hex[:10]}.customer.test"
    yield name
    zone.clear(name)
    zone.clear(f"_feedback-verify.{name}")
