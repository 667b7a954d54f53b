"""The webhooks tests' receiver, DNS server, and the settings the stack's webhooks processes get.

Imported at collection, before the session ``stack`` starts, so STACK_ENV reaches the
webhooks API and dispatcher: 127.0.0.1 is allowed past the SSRF guard (the receiver lives
there), plain http is allowed, host names resolve through the tests' own DNS server, and
the retry schedule, timeout and disable span are shrunk so they show within seconds.
"""

from __future__ import annotations

import pytest

from common.testing import STACK_ENV
from webhook_helpers import DISABLE_AFTER, RETRY_SCALE, ROTATION_WINDOW, TIMEOUT, Hooks
from webhook_dns import Names, start
from webhook_receiver import Receiver


NAMES = Names()
DNS_PORT = start(NAMES)

STACK_ENV.update(
    {
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "WEBHOOK_DNS_SERVER": f"127.0.0.1:{DNS_PORT}",
        "WEBHOOK_DNS_TIMEOUT": "1",
        "WEBHOOK_TIMEOUT_SECONDS": str(TIMEOUT),
        "WEBHOOK_RETRY_SCALE": str(RETRY_SCALE),
        "WEBHOOK_DISABLE_AFTER_SECONDS": str(DISABLE_AFTER),
        "WEBHOOK_ROTATION_WINDOW_SECONDS": str(ROTATION_WINDOW),
        "WEBHOOK_POLL_SECONDS": "0.1",
    }
)


@pytest.fixture(scope="session")
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture(scope="session")
def names() -> Names:
    return NAMES


@pytest.fixture
def hooks(api, workspace) -> Hooks:
    return Hooks(api, workspace)
