"""Where a domain goes after a check: the status machine, as pure functions.

    pending  --records found-------------------> verified
    pending  --worker, past its deadline--------> failed
    verified --records gone or wrong-----------> broken   (or after repeated failed lookups)
    broken   --records found-------------------> verified
    broken   --worker, past its deadline--------> failed
    failed   --"check now" finds them----------> verified
    failed   --"check now" does not------------> pending  (a fresh deadline)

Every status change yields one event, named after the new status (contract.EVENT_FOR_STATUS).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from domains import contract as c
from domains.config import DomainsConfig
from domains.dns_check import CheckResult


@dataclass(frozen=True)
class Outcome:
    changes: dict  # fields to $set on the domain document
    event: str | None  # event type to publish, when the status changed


def backoff(config: DomainsConfig, attempts: int) -> float:
    """Seconds until the next check of a pending or broken domain after ``attempts`` failures."""
    return min(config.check_initial * 2 ** max(attempts - 1, 0), config.check_max)


def later(at: datetime, seconds: float) -> datetime:
    return at + timedelta(seconds=seconds)


def new_domain(config: DomainsConfig, at: datetime) -> dict:
    """Fields of a domain just set (or changed): pending, first check after the initial delay."""
    return {
        "status": c.PENDING,
        "errors": [],
        "verifiedAt": None,
        "checkedAt": None,
        "attempts": 0,
        "inconclusive": 0,
        "deadline": later(at, config.pending_timeout),
        "nextCheckAt": later(at, config.check_initial),
    }


def after_check(config: DomainsConfig, doc: dict, result: CheckResult, at: datetime, manual: bool) -> Outcome:
    """The next state of ``doc`` given a check's ``result``.

    ``manual`` is a customer's "check now": it can verify, re-arm a failed domain, or report
    problems, but it never fails a domain (only the worker does, at the deadline).
    """
    status = doc["status"]
    base = {"errors": list(result.errors), "checkedAt": at}
    if result.ok:
        changes = {**base, "status": c.VERIFIED, "attempts": 0, "inconclusive": 0, "deadline": None,
                   "nextCheckAt": later(at, config.recheck_interval)}
        if status != c.VERIFIED:
            changes["verifiedAt"] = at
        return _outcome(status, changes)

    if status == c.VERIFIED:
        inconclusive = doc.get("inconclusive", 0) + (0 if result.conclusive else 1)
        if not result.conclusive and inconclusive < c.INCONCLUSIVE_CHECKS_BEFORE_BROKEN:
            # Could not ask DNS: keep serving, look again soon.
            return _outcome(status, {**base, "inconclusive": inconclusive, "nextCheckAt": later(at, backoff(config, inconclusive))})
        return _outcome(status, {**base, "status": c.BROKEN, "attempts": 1, "inconclusive": 0,
                                 "deadline": later(at, config.pending_timeout), "nextCheckAt": later(at, backoff(config, 1))})

    if status == c.FAILED:
        if not manual:
            return _outcome(status, base)
        return _outcome(status, {**base, "status": c.PENDING, "attempts": 1, "deadline": later(at, config.pending_timeout),
                                 "nextCheckAt": later(at, backoff(config, 1))})

    # pending or broken: keep trying with backoff until the deadline.
    attempts = doc.get("attempts", 0) + 1
    deadline = doc.get("deadline")
    if not manual and deadline is not None and at >= _aware(deadline, at):
        return _outcome(status, {**base, "status": c.FAILED, "attempts": attempts, "nextCheckAt": None})
    return _outcome(status, {**base, "attempts": attempts, "nextCheckAt": later(at, backoff(config, attempts))})


def _outcome(before: str, changes: dict) -> Outcome:
    after = changes.get("status", before)
    return Outcome(changes, c.EVENT_FOR_STATUS[after] if after != before else None)


def _aware(value: datetime, like: datetime) -> datetime:
    # Stored datetimes come back tz-aware from the Store (tz_aware=True); be safe with naive ones.
    return value if value.tzinfo is not None or like.tzinfo is None else value.replace(tzinfo=like.tzinfo)
