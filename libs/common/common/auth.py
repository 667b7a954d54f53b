"""Who is calling: the identity the gateway establishes and services verify.

The gateway authenticates the public credential (a workspace API key, an end-user SSO
JWT, or nobody) and forwards the result as ``X-Feedback-Caller`` (JSON), signed with
HMAC-SHA256 under the shared ``INTERNAL_SECRET``. The signature covers the target service,
method, path, query string, a digest of the body, the caller, a timestamp, a random nonce and
the headers that change what a request means (``COVERED_HEADERS``: name and value, an absent
header differs from an empty one). A service accepts it only within ``SIGNATURE_WINDOW``
seconds of that timestamp and only once (``Nonces``): a captured request cannot be replayed,
sent to another service, or given another body, query, idempotency key, cookie, bearer or
client address. Calling a service directly, bypassing the gateway, gets nobody anywhere.

The nonce memory is per process: within the window, a captured request could still be
replayed once to another process (or pod) of the same service.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Mapping

from cachetools import TTLCache
from prometheus_client import Counter

from common.errors import Forbidden, Unauthorized
from common.public_api import CLIENT_HEADER
from common.validation import TEXT, nullable, shape

CALLER_HEADER = "X-Feedback-Caller"
SIGNATURE_HEADER = "X-Feedback-Signature"
TIMESTAMP_HEADER = "X-Feedback-Timestamp"
NONCE_HEADER = "X-Feedback-Nonce"
SIGNATURE_WINDOW = 30  # seconds a signed request stays valid (clock skew between pods included)
# Headers whose change would change what a request does: a stored answer (Idempotency-Key), the
# visitor of a page (Cookie), the key a front service checks (Authorization), the client address
# the gateway vouches for (CLIENT_HEADER).
COVERED_HEADERS = ("Idempotency-Key", "Cookie", "Authorization", CLIENT_HEADER)
# What a verifier reads from a request: hand ``verify`` these, by name.
SIGNED_REQUEST_HEADERS = (CALLER_HEADER, TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER, *COVERED_HEADERS)
# Nonces one process remembers at most. A nonce is kept 2 x SIGNATURE_WINDOW (a request stamped
# up to a window ahead of this clock stays valid a window after it), so 100,000 covers 1,666
# signed requests a second into one process, sustained (more than a service process serves:
# docs/benchmarks.md), in about 30 MB when full. Past it the oldest nonces are forgotten early
# (counted in feedback_internal_nonces_forgotten_total): a replay of one of those requests
# would then pass once more, within its window.
NONCES_MAX = 100_000

NONCES_FORGOTTEN = Counter(
    "feedback_internal_nonces_forgotten_total", "Nonces of signed internal requests forgotten before their window ended (memory full)"
)

ANONYMOUS = "anonymous"
USER = "user"
MANAGER = "manager"
ADMIN = "admin"  # the operator (FEEDBACK_ADMIN_TOKEN): creates workspaces, acts as manager anywhere
# API key roles: a manager key makes a manager; a write key an identified end user (an agent:
# it submits, votes and comments as itself); a read key the same end user, reading only.
MANAGER_KEY, WRITE_KEY, READ_KEY = "manager", "write", "read"
# A signed-in team member's role in its workspace (people service): an owner also manages members.
OWNER, MEMBER_MANAGER = "owner", "manager"
# What a signed-in person's ``user_id`` starts with (``person:<id>``), beside ``sso:`` (an SSO
# token without an email), ``agent:`` (a scoped API key) and ``anon:`` (an anonymous visitor).
PERSON_PREFIX = "person:"


@dataclass(frozen=True)
class Caller:
    kind: str = ANONYMOUS
    workspace: str | None = None  # slug the credential belongs to (None for anonymous/admin)
    user_id: str | None = None  # end user id (SSO) or "anon:<hash>" for anonymous callers
    name: str | None = None
    email: str | None = None
    avatar_url: str | None = None
    key_id: str | None = None  # API key id (managers, and agents with a scoped key)
    session_id: str | None = None  # a signed-in visitor's session (people service): what signing out ends
    role: str | None = None  # an API key's role (manager, write, read: the gateway enforces read), or a member's (owner, manager)
    # An API key made by a team member's session (or derived from such a key): that member's
    # ``person:<id>``. The key acts with no more than its maker's rights, and only while the
    # maker is on the team (people service). None: the operator's key (or not a key).
    key_maker: str | None = None

    def is_manager_of(self, slug: str) -> bool:
        return self.kind == ADMIN or (self.kind == MANAGER and self.workspace == slug)

    def to_header(self) -> str:
        fields = ((name, getattr(self, name)) for name in self.__dataclass_fields__)
        return json.dumps({k: v for k, v in fields if v is not None}, separators=(",", ":"))

    @classmethod
    def from_header(cls, value: str) -> "Caller":
        data = json.loads(value)
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__ if k in data})


def covered_digest(headers: Mapping[str, str | None] | None) -> str:
    """A digest of the covered headers as sent: each name with its value, or null when absent.
    Values are trimmed as HTTP servers trim them before a verifier reads them."""
    present = {name.lower(): value.strip() for name, value in (headers or {}).items() if value is not None}
    pairs = [[name.lower(), present.get(name.lower())] for name in COVERED_HEADERS]
    return hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()


def sign(secret: str, service: str, method: str, path: str, query: str, body: bytes, caller_header: str, timestamp: str,
         nonce: str = "", covered: str = "") -> str:
    digest = hashlib.sha256(body or b"").hexdigest()
    msg = "\n".join((service, method.upper(), path, query or "", digest, caller_header, timestamp, nonce, covered)).encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()


class Nonces:
    """The nonces this process has accepted, for as long as their requests could be replayed."""

    def __init__(self, maxsize: int = NONCES_MAX, window: float = SIGNATURE_WINDOW, timer=time.monotonic):
        self._seen = _CountingTTLCache(maxsize=maxsize, ttl=2 * window, timer=timer)
        self._lock = threading.Lock()

    def first_use(self, nonce: str) -> bool:
        """Remember ``nonce``; whether it was new."""
        with self._lock:
            if nonce in self._seen:
                return False
            self._seen[nonce] = True
            return True


class _CountingTTLCache(TTLCache):
    def popitem(self):
        # Called only to make room, never for expired entries: a nonce forgotten too soon.
        item = super().popitem()
        NONCES_FORGOTTEN.inc()
        return item


def verify(secret: str, service: str, method: str, path: str, query: str, body: bytes, headers: Mapping[str, str | None],
           now: float | None = None, nonces: Nonces | None = None) -> bool:
    """Whether ``headers`` (``SIGNED_REQUEST_HEADERS`` by name) sign this very request to
    ``service``, recently, with the covered headers it carries; with ``nonces``, also that it
    was not accepted before."""
    headers = {name.lower(): value for name, value in headers.items()}
    timestamp = headers.get(TIMESTAMP_HEADER.lower()) or ""
    nonce = headers.get(NONCE_HEADER.lower()) or ""
    try:
        fresh = abs((time.time() if now is None else now) - int(timestamp)) <= SIGNATURE_WINDOW
    except ValueError:
        return False
    if not fresh or not nonce:
        return False
    caller = headers.get(CALLER_HEADER.lower()) or ""
    expected = sign(secret, service, method, path, query, body, caller, timestamp, nonce, covered_digest(headers))
    if not hmac.compare_digest(expected, headers.get(SIGNATURE_HEADER.lower()) or ""):
        return False
    # Only a valid signature spends its nonce, so nobody can use up another request's.
    return nonces is None or nonces.first_use(nonce)


def signed_headers(secret: str, service: str, method: str, path: str, query: str, body: bytes | None, caller: Caller,
                   headers: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The headers that let ``service`` trust ``caller`` for this request (and only this one,
    once, briefly), sent with ``headers``: the covered ones among them are signed."""
    header = caller.to_header()
    timestamp = str(int(time.time()))
    nonce = secrets.token_urlsafe(16)
    return {
        CALLER_HEADER: header,
        TIMESTAMP_HEADER: timestamp,
        NONCE_HEADER: nonce,
        SIGNATURE_HEADER: sign(secret, service, method, path, query, body or b"", header, timestamp, nonce, covered_digest(headers)),
    }


def actor(caller: Caller) -> dict | None:
    """Who did something, as events, webhook payloads and the audit log name them: ``{id, name}``
    of a signed-in person (``person:<id>``), of an API key (``key:<id>``, its name) or of the
    operator; None for an anonymous caller."""
    if caller.kind == ADMIN:
        return {"id": "operator", "name": "Operator"}
    if caller.user_id and caller.user_id.startswith(PERSON_PREFIX):
        return {"id": caller.user_id, "name": caller.name or caller.email or "Someone"}
    if caller.key_id:
        return {"id": f"key:{caller.key_id}", "name": caller.name or "API key"}
    if caller.kind == ANONYMOUS or not caller.user_id:
        return None
    return {"id": caller.user_id, "name": caller.name or "Someone"}


# The JSON schema of an ``actor`` field in event data: what :func:`actor` returns.
ACTOR_SCHEMA = nullable(shape({"id": TEXT, "name": TEXT}))


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
