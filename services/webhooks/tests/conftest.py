"""The settings the stack's webhooks processes get for these tests, and their fixtures.

127.0.0.1 is allowed past the SSRF guard (the receiver lives there), plain http is
allowed, host names resolve through the tests' DNS server (``dns_zone``), and the retry
schedule, timeout and disable span are shrunk so they show within seconds.
"""

from __future__ import annotations

import uuid

import pytest

from .helpers import DISABLE_AFTER, RETRY_SCALE, ROTATION_WINDOW, TIMEOUT, Hooks
from .receiver import Receiver


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    return {
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "WEBHOOK_DNS_SERVER": f"127.0.0.1:{dns_port}",
        "WEBHOOK_DNS_TIMEOUT": "1",
        "WEBHOOK_TIMEOUT_SECONDS": str(TIMEOUT),
        "WEBHOOK_RETRY_SCALE": str(RETRY_SCALE),
        "WEBHOOK_DISABLE_AFTER_SECONDS": str(DISABLE_AFTER),
        "WEBHOOK_ROTATION_WINDOW_SECONDS": str(ROTATION_WINDOW),
        "WEBHOOK_POLL_SECONDS": "0.1",
    }


@pytest.fixture(scope="session")
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def hooks(api, workspace) -> Hooks:
    return Hooks(api, workspace)


# -- in process (the service layer against the real local database) ------------------------------


@pytest.fixture(scope="module")
def context(service_context):
    return service_context("webhooks")


@pytest.fixture
def slug() -> str:
    return f"unit-{uuid.uuid4().hex[:10]}"
