"""Hooks a test folder's conftest.py may implement (registered by ``testkit.fixtures``)."""

import pytest


@pytest.hookspec
def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    """Return settings the platform's processes get for this folder's tests.

    Called once, when the session's ``stack`` starts (not at collection). ``dns_port`` is
    the UDP port of the tests' DNS server on 127.0.0.1 (``dns_zone`` holds its records)."""
