"""The settings the stack's people processes get for these tests.

The OpenID Connect tests run their providers in this process, on loopback: a real one
(oidc-provider-mock, at ``http://localhost:<port>``) and hostile ones of their own. The outbound
guard refuses loopback by default, so ``localhost`` and ``127.0.0.1`` are allowed here, by name,
and nothing else inside (``127.0.0.2``, the hostile tests' "internal" address, stays refused).
Each exchange with a provider is cut at OIDC_TIMEOUT seconds, so the tests of dripping
providers end quickly.
"""

from __future__ import annotations

OIDC_TIMEOUT = 3  # PEOPLE_OIDC_TIMEOUT_SECONDS of the stack
OIDC_PER_WORKSPACE = 2  # PEOPLE_OIDC_CONCURRENCY_PER_WORKSPACE (the default)


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    return {
        "PEOPLE_OIDC_ALLOWED_HOSTS": "localhost,127.0.0.1",
        "PEOPLE_OIDC_TIMEOUT_SECONDS": str(OIDC_TIMEOUT),
        "PEOPLE_OIDC_CONCURRENCY_PER_WORKSPACE": str(OIDC_PER_WORKSPACE),
    }
