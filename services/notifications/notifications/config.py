"""The notifications service's settings, read once from the environment (docs/services/notifications.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, between, from_env, load, positive


@dataclass(frozen=True)
class NotificationsConfig:
    # A status change of a post whose followers were mailed less than this long ago is held
    # and folded into one follow-up sent this long after that mail (seconds; 0: never held).
    fold_seconds: int = from_env("NOTIFICATIONS_FOLD_SECONDS", 600, between(0, 3600))
    # Mail one workspace may send per minute (each mailer worker counts its own).
    per_workspace_per_minute: int = from_env("NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE", 1200, positive(int))
    # The hour (UTC) daily and weekly digests go out; weekly ones on Mondays.
    digest_hour: int = from_env("NOTIFICATIONS_DIGEST_HOUR", 8, between(0, 23))
    # How often the scheduler looks for held follow-ups and digests that fell due (seconds).
    schedule_seconds: float = from_env("NOTIFICATIONS_SCHEDULE_SECONDS", 5.0, positive(float))
    # Messages a fan-out queues per round trip (a kill between two loses none: each is keyed).
    enqueue_batch: int = from_env("NOTIFICATIONS_ENQUEUE_BATCH", 1000, between(1, 10_000))
    # Changelog subscriptions (docs/services/notifications.md, "Changelog by email"): how long a
    # confirmation link works (seconds), how long before the same pending address is mailed a
    # confirmation again, and how many confirmation mails one workspace sends an hour (past it,
    # 429: a script filling the form with strangers' addresses stops there).
    confirm_seconds: int = from_env("NOTIFICATIONS_CONFIRM_SECONDS", 7 * 86400, between(60, 90 * 86400))
    confirm_resend_seconds: int = from_env("NOTIFICATIONS_CONFIRM_RESEND_SECONDS", 600, between(0, 86400))
    confirmations_per_hour: int = from_env("NOTIFICATIONS_CONFIRMATIONS_PER_WORKSPACE_PER_HOUR", 300, positive(int))
    # The platform's public address: links in mail lead to the board there (or to the
    # workspace's verified custom domain).
    public_base_url: str = "http://127.0.0.1:8080"


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> NotificationsConfig:
    return load(NotificationsConfig, environ, public_base_url=settings.public_base_url)
