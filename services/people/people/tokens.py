"""The secrets this service hands out, and how it stores them: only their SHA-256.

The values are 256 random bits, so a plain hash is as strong as a slow one here (no password
to guess), and it lets a lookup find the stored document by the hash alone."""

from __future__ import annotations

import hashlib
import secrets

from people.contract import SESSION_PREFIX, TOKEN_BYTES


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def new_session_token() -> str:
    return SESSION_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_session_token(value: str | None) -> bool:
    return bool(value) and value.startswith(SESSION_PREFIX)
