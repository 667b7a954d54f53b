"""API keys as strings: their format, what is stored of them, and which stored key one names.

A key is ``fbk_<16 hex id>_<32 url-safe random chars>``. The id finds the stored key by an
indexed lookup; only the sha256 of the whole key is stored, so the database never holds a
usable key. Which keys exist, and for whom, is the service's business (``service.py``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_PREFIX = "fbk_"
SHOWN = 12  # leading characters kept in clear (``prefix``), to recognise a key in a list


def generate() -> tuple[str, str]:
    """``(key id, key)`` of a new key."""
    key_id = secrets.token_hex(8)
    return key_id, f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(24)}"


def hash_key(key: str) -> str:
    # API keys carry 192 random bits, so a fast hash is enough (nothing to brute-force).
    return hashlib.sha256(key.encode()).hexdigest()


def key_id_of(key: str) -> str | None:
    """The id a presented key claims, or None when it is not shaped like one of ours."""
    return key[len(KEY_PREFIX) :].split("_", 1)[0] if key.startswith(KEY_PREFIX) else None


def matches(key: str, stored_hash: str) -> bool:
    return hmac.compare_digest(stored_hash, hash_key(key))
