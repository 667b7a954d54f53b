"""Who is calling: the identity the gateway establishes and services verify.

The gateway authenticates the public credential (a workspace API key, an end-user SSO
JWT, or nobody) and forwards the result as ``X-Feedback-Caller`` (JSON), signed with
HMAC-SHA256 over method, path and caller using the shared ``INTERNAL_SECRET``. A service
rejects any request whose signature does not match, so calling a service directly,
bypassing the gateway, gets nobody anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

from common.errors import Forbidden, Unauthorized

CALLER_HEADER = "X-Feedback-Caller"
SIGNATURE_HEADER = "X-Feedback-Signature"

ANONYMOUS = "anonymous"
USER = "user"
MANAGER = "manager"
ADMIN = "admin"  # the operator (FEEDBACK_ADMIN_TOKEN): creates workspaces, acts as manager anywhere


@dataclass(frozen=True)
class Caller:
    kind: str = ANONYMOUS
    workspace: str | None = None  # slug the credential belongs to (None for anonymous/admin)
    user_id: str | None = None  # end user id (SSO) or "anon:<hash>" for anonymous callers
    name: str | None = None
    email: str | None = None
    avatar_url: str | None = None
    key_id: str | None = None  # API key id for managers

    def is_manager_of(self, slug: str) -> bool:
        return self.kind == ADMIN or (self.kind == MANAGER and self.workspace == slug)

    def to_header(self) -> str:
        fields = ((name, getattr(self, name)) for name in self.__dataclass_fields__)
        return json.dumps({k: v for k, v in fields if v is not None}, separators=(",", ":"))

    @classmethod
    def from_header(cls, value: str) -> "Caller":
        data = json.loads(value)
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__ if k in data})


def sign(secret: str, method: str, path: str, caller_header: str) -> str:
    msg = f"{method.upper()}\n{path}\n{caller_header}".encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()


def verify(secret: str, method: str, path: str, caller_header: str, signature: str) -> bool:
    return hmac.compare_digest(sign(secret, method, path, caller_header), signature or "")


def signed_headers(secret: str, method: str, path: str, caller: Caller) -> dict[str, str]:
    """The two headers that let a service trust ``caller`` for this method and path."""
    header = caller.to_header()
    return {CALLER_HEADER: header, SIGNATURE_HEADER: sign(secret, method, path, header)}


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
