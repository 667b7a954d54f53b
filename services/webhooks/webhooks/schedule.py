"""When to try again: the Standard Webhooks schedule, scaled, jittered, and Retry-After."""

from __future__ import annotations

import random

from webhooks.contract import JITTER, RETRY_DELAYS


def next_delay(failed_attempts: int, scale: float, retry_after: float | None = None) -> float | None:
    """Seconds until the next attempt after ``failed_attempts`` failures in a row (1-based);
    None once the schedule is used up. A receiver's Retry-After (429/503) is a floor: it is
    honoured as given, not scaled."""
    if failed_attempts > len(RETRY_DELAYS):
        return None
    delay = RETRY_DELAYS[failed_attempts - 1] * scale * (1 + random.uniform(0, JITTER))
    return max(delay, retry_after or 0.0)
