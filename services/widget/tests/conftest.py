"""The widget's browser tests use the board site's browser fixtures (Debian's chromium through
Playwright, axe-core): imported, not copied."""

from __future__ import annotations

from services.web.tests.browsing import browser, page  # noqa: F401
