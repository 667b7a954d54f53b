"""Identifiers and timestamps as the API shows them.

Ids are 24-hex-digit MongoDB ObjectIds as strings; timestamps are ISO 8601 in UTC with
millisecond precision and a ``Z`` suffix. Unset optional fields are ``null``, never absent.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from bson import ObjectId
from bson.errors import InvalidId

from common.errors import NotFound

# A workspace slug: lower-case letters, digits and inner hyphens, 1 to 48 characters. The
# gateway refuses any other before a service is asked (an unknown slug costs nothing).
SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$"
SLUG = re.compile(SLUG_PATTERN)
# An ObjectId in any case; the API's spelling is lower-case (``canonical_id``).
HEX_ID = re.compile(r"[0-9a-fA-F]{24}")


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


def canonical_id(value: str) -> str:
    """An id as the API spells it: ObjectIds in lower-case hex (an upper-case spelling names the
    same document, so votes and merges must not see two)."""
    return value.lower() if HEX_ID.fullmatch(value) else value


def new_id() -> str:
    return str(ObjectId())


def object_id(value: str, what: str = "resource") -> ObjectId:
    """Parse a path id; a malformed id names nothing, so it is a 404 like an unknown one."""
    try:
        return ObjectId(value)
    except (InvalidId, TypeError):
        raise NotFound(f"{what} {value!r} not found") from None
