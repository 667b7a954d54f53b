"""The people service's background loop: sending the mail it queued."""

from __future__ import annotations

import threading

from common.mail import Mailer, RetrySchedule, deliver


def send_mail(context, stop: threading.Event) -> None:
    settings = context.settings
    deliver(context.mail_queue, Mailer(settings.smtp_url, settings.mail_from), settings.mail_from, stop,
            lease=settings.mail_lease_seconds, schedule=RetrySchedule(first=settings.mail_retry_seconds))
