"""Identifiers and timestamps as the API shows them.

Ids are 24-hex-digit MongoDB ObjectIds as strings; timestamps are ISO 8601 in UTC with
millisecond precision and a ``Z`` suffix. Unset optional fields are ``null``, never absent.
"""

from __future__ import annotations

from datetime import datetime, timezone

from bson import ObjectId
from bson.errors import InvalidId

from common.errors import NotFound


def now() -> datetime:
    # MongoDB stores milliseconds; truncate so what we return equals what we store.
    t = datetime.now(timezone.utc)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id() -> str:
    return str(ObjectId())


def object_id(value: str, what: str = "resource") -> ObjectId:
    """Parse a path id; a malformed id names nothing, so it is a 404 like an unknown one."""
    try:
        return ObjectId(value)
    except (InvalidId, TypeError):
        raise NotFound(f"{what} {value!r} not found") from None
