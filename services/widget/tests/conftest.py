"""The widget's browser tests use the board site's browser fixtures (Debian's chromium through
Playwright, axe-core): imported, not copied."""

from __future__ import annotations

from services.web.tests.browsing import browser, page  # noqa: F401


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    # The widget reads a workspace's settings afresh on every request here, so a test sees a
    # change at once (deployed, it keeps them WIDGET_SETTINGS_CACHE_SECONDS).
    return {"WIDGET_SETTINGS_CACHE_SECONDS": "0"}
