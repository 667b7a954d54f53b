"""Settings the stack's notifications processes get for these tests: a status change held for
3 seconds instead of 10 minutes, a scheduler that looks twice a second, and no send-rate limit
that a 2,000-follower fan-out would wait on (the limit's own test is in libs/common)."""

from __future__ import annotations


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    return {
        "NOTIFICATIONS_FOLD_SECONDS": "3",
        "NOTIFICATIONS_SCHEDULE_SECONDS": "0.5",
        "NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE": "1000000",
    }
