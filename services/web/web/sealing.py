"""A session's credential sealed with a key only the visitor's cookie holds.

The database keeps sha256(session id), never the id itself, so a key derived from the id
(HKDF-SHA256) makes a stored record useless without the cookie: a dump or a backup of the
sessions yields no API key and no user token. AES-GCM authenticates the record's kind and
workspace too, so a record edited in the database (a user session turned into a manager's)
does not open.
"""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = "v1"
_INFO = b"feedback web session credential " + VERSION.encode()
_NONCE = 12


def _key(session_id: str) -> AESGCM:
    # The id is 32 random bytes (secrets.token_urlsafe): enough entropy that HKDF needs no salt.
    return AESGCM(HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(session_id.encode()))


def seal(session_id: str, credential: str, bound_to: str) -> str:
    nonce = os.urandom(_NONCE)
    sealed = _key(session_id).encrypt(nonce, credential.encode(), bound_to.encode())
    return VERSION + "." + base64.urlsafe_b64encode(nonce + sealed).decode()


def unseal(session_id: str, sealed: str, bound_to: str) -> str | None:
    """The credential, or None when the record was not sealed for this id and binding."""
    version, _, body = (sealed or "").partition(".")
    if version != VERSION:
        return None
    try:
        raw = base64.urlsafe_b64decode(body)
        return _key(session_id).decrypt(raw[:_NONCE], raw[_NONCE:], bound_to.encode()).decode()
    except (InvalidTag, ValueError):
        return None
