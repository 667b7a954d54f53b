"""The settings the stack's domains processes get for these tests, and their fixtures.

The domains API and worker resolve through the tests' DNS server (``dns_zone``); check
intervals are scaled down so the worker's transitions show within seconds.
"""

from __future__ import annotations

import uuid

import pytest

from .helpers import PENDING_TIMEOUT, dns_settings


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    return {
        **dns_settings(dns_port),
        "DOMAINS_CHECK_INITIAL": "0.5",
        "DOMAINS_CHECK_MAX": "1",
        "DOMAINS_PENDING_TIMEOUT": str(PENDING_TIMEOUT),
        "DOMAINS_RECHECK_INTERVAL": "1",
        "DOMAINS_WORKER_POLL": "0.2",
    }


@pytest.fixture
def zone(dns_zone):
    return dns_zone


@pytest.fixture
def domain(zone):
    """A fresh customer domain name; its records are removed afterwards."""
    name = f"fb-{uuid.uuid4().hex[:10]}.customer.test"
    yield name
    zone.clear(name)
    zone.clear(f"_feedback-verify.{name}")
