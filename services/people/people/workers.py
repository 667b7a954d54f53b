"""The people service's background loop: sending the mail it queued."""

from __future__ import annotations

import threading

from common.mail import Mailer, deliver


def send_mail(context, stop: threading.Event) -> None:
    settings = context.settings
    deliver(context.mail_queue, Mailer(settings.smtp_url, settings.mail_from), settings.mail_from, stop)
