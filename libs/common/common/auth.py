"""Who is calling: the identity the gateway establishes and services verify.

The gateway authenticates the public credential (a workspace API key, an end-user SSO
JWT, or nobody) and forwards the result as ``X-Feedback-Caller`` (JSON), signed with
HMAC-SHA256 under the shared ``INTERNAL_SECRET``. The signature covers the target service,
method, path, query string, a digest of the body, the caller and a timestamp, and a service
accepts it only within ``SIGNATURE_WINDOW`` seconds of that timestamp: a captured request
cannot be replayed later, sent to another service, or given another body or query. Calling
a service directly, bypassing the gateway, gets nobody anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass

from common.errors import Forbidden, Unauthorized

CALLER_HEADER = "X-Feedback-Caller"
SIGNATURE_HEADER = "X-Feedback-Signature"
TIMESTAMP_HEADER = "X-Feedback-Timestamp"
SIGNATURE_WINDOW = 30  # seconds a signed request stays valid (clock skew between pods included)

ANONYMOUS = "anonymous"
USER = "user"
MANAGER = "manager"
ADMIN = "admin"  # the operator (FEEDBACK_ADMIN_TOKEN): creates workspaces, acts as manager anywhere
# API key roles: a manager key makes a manager; a write key an identified end user (an agent:
# it submits, votes and comments as itself); a read key the same end user, reading only.
MANAGER_KEY, WRITE_KEY, READ_KEY = "manager", "write", "read"


@dataclass(frozen=True)
class Caller:
    kind: str = ANONYMOUS
    workspace: str | None = None  # slug the credential belongs to (None for anonymous/admin)
    user_id: str | None = None  # end user id (SSO) or "anon:<hash>" for anonymous callers
    name: str | None = None
    email: str | None = None
    avatar_url: str | None = None
    key_id: str | None = None  # API key id (managers, and agents with a scoped key)
    role: str | None = None  # an API key's role: manager, write or read (the gateway enforces read)

    def is_manager_of(self, slug: str) -> bool:
        return self.kind == ADMIN or (self.kind == MANAGER and self.workspace == slug)

    def to_header(self) -> str:
        fields = ((name, getattr(self, name)) for name in self.__dataclass_fields__)
        return json.dumps({k: v for k, v in fields if v is not None}, separators=(",", ":"))

    @classmethod
    def from_header(cls, value: str) -> "Caller":
        data = json.loads(value)
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__ if k in data})


def sign(secret: str, service: str, method: str, path: str, query: str, body: bytes, caller_header: str, timestamp: str) -> str:
    digest = hashlib.sha256(body or b"").hexdigest()
    msg = "\n".join((service, method.upper(), path, query or "", digest, caller_header, timestamp)).encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()


def verify(secret: str, service: str, method: str, path: str, query: str, body: bytes, headers: dict, now: float | None = None) -> bool:
    """Whether ``headers`` (caller, timestamp, signature) sign this very request to ``service``, recently."""
    timestamp = headers.get(TIMESTAMP_HEADER) or ""
    try:
        fresh = abs((time.time() if now is None else now) - int(timestamp)) <= SIGNATURE_WINDOW
    except ValueError:
        return False
    expected = sign(secret, service, method, path, query, body, headers.get(CALLER_HEADER) or "", timestamp)
    return fresh and hmac.compare_digest(expected, headers.get(SIGNATURE_HEADER) or "")


def signed_headers(secret: str, service: str, method: str, path: str, query: str, body: bytes | None, caller: Caller) -> dict[str, str]:
    """The headers that let ``service`` trust ``caller`` for this request (and only this one, briefly)."""
    header = caller.to_header()
    timestamp = str(int(time.time()))
    return {
        CALLER_HEADER: header,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(secret, service, method, path, query, body or b"", header, timestamp),
    }


def require_manager(caller: Caller, slug: str) -> None:
    """Raise 401 for nobody, 403 for anyone who is not a manager of ``slug``."""
    if caller.kind == ANONYMOUS:
        raise Unauthorized("authentication required: send a manager API key as 'Authorization: Bearer <key>'")
    if not caller.is_manager_of(slug):
        raise Forbidden("this operation is restricted to managers of this workspace")


def require_admin(caller: Caller) -> None:
    if caller.kind == ANONYMOUS:
        raise Unauthorized("authentication required: send the operator token as 'Authorization: Bearer <token>'")
    if caller.kind != ADMIN:
        raise Forbidden("this operation is restricted to the platform operator")
