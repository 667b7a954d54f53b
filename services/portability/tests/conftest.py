"""The settings the stack's processes get for these tests: an idle worker looks for work often,
so an export or an import starts at once; webhooks may point at this machine (a webhook with a
secret is part of the seeded workspace)."""

# The board site's browser fixtures (Chromium through Playwright), for the admin page's test.
from services.web.tests.browsing import browser, page  # noqa: F401


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    # A short lease: the kill test's import is claimed again seconds after its worker died (one
    # worker runs here, so no live run loses its claim to another).
    return {"PORTABILITY_POLL_SECONDS": "0.2", "PORTABILITY_LEASE_SECONDS": "5", "PORTABILITY_IMPORT_BATCH": "200",
            "WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}
