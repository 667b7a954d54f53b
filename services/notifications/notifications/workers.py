"""The notifications service's background loops: sending the queued mail, and the scheduler
that sends held status follow-ups and digests when they fall due."""

from __future__ import annotations

import logging
import threading


from common.consumer import TRANSIENT
from common.ids import now
from common.mail import Mailer, RetrySchedule, deliver
from common.retry import run_until_stopped

log = logging.getLogger(__name__)


def send_mail(context, stop: threading.Event) -> None:
    settings = context.settings
    deliver(context.mail_queue, Mailer(settings.smtp_url, settings.mail_from), settings.mail_from, stop,
            lease=settings.mail_lease_seconds, schedule=RetrySchedule(first=settings.mail_retry_seconds),
            per_workspace_per_minute=context.config.per_workspace_per_minute, on_refused=context.notifier.refused)


def schedule(context, stop: threading.Event) -> None:
    def step() -> None:
        context.notifier.send_held(now())
        context.notifier.send_digests(now())
        stop.wait(context.config.schedule_seconds)

    run_until_stopped(step, stop, errors=TRANSIENT, what="notifications scheduler", log=log)
