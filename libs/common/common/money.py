"""Money as the platform keeps it: whole cents (sums stay exact), shown as JSON numbers."""

from __future__ import annotations

from common.errors import BadRequest


def to_cents(amount: float, field: str = "amount") -> int:
    """An amount of at most two decimals as cents; 400 for more. (JSON Schema's
    ``multipleOf: 0.01`` cannot say it: it refuses 19.99, a binary float.)"""
    cents = round(amount * 100)
    if abs(amount * 100 - cents) > 1e-6 * max(1.0, abs(amount)):
        raise BadRequest(f"field '{field}' has at most two decimals (cents)")
    return cents


def from_cents(cents: int) -> int | float:
    """Cents as the API shows money: a whole number when it is one."""
    return cents // 100 if cents % 100 == 0 else cents / 100
