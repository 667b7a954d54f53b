"""Settings the stack's notifications processes get for these tests: a status change held for
3 seconds instead of 10 minutes, a scheduler that looks twice a second, no send-rate limit that a
fan-out to hundreds would wait on (the limit's own test is in libs/common), a fan-out queued 50
messages at a time (so a kill finds it midway), and a mail lease of 10 seconds and a first retry after 2 seconds (for every mailer of the stack: the kill and SMTP-outage
tests wait for them)."""

from __future__ import annotations


def pytest_feedback_stack_env(dns_port: int) -> dict[str, str]:
    return {
        "NOTIFICATIONS_FOLD_SECONDS": "3",
        "NOTIFICATIONS_SCHEDULE_SECONDS": "0.5",
        "NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE": "1000000",
        "NOTIFICATIONS_ENQUEUE_BATCH": "50",
        # A killed mailer's messages are sent again after 10 s, not 2 minutes (test_reliability).
        "MAIL_LEASE_SECONDS": "10",
        # A failed send is tried again after 2, 4, 8... seconds, not 10, 20, 40... (test_reliability).
        "MAIL_RETRY_SECONDS": "2",
    }
