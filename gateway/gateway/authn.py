"""Authenticate public callers and cache the answer briefly.

Credentials (documented in the README and the OpenAPI document):
- ``Authorization: Bearer <FEEDBACK_ADMIN_TOKEN>``: the operator;
- ``Authorization: Bearer <workspace API key>``: a manager of that key's workspace (or an agent,
  for a key of role ``write`` or ``read``); on a route without a workspace in its path (``GET
  /v1/api-key``) the key names its workspace itself;
- ``X-Feedback-User: <JWT>``: an end user, HS256-signed with the workspace's ssoSecret;
- nothing: anonymous, identified for votes by ``X-Feedback-Anonymous-Id`` (a random id
  the client keeps) or, failing that, by its address (X-Forwarded-For only from a trusted
  proxy) and user agent.

- ``Authorization: Bearer <session token>``: a person signed in (a team member or an end user).

The gateway asks the plugin that declares ``identity_path`` (the people service) and caches
the verdict for AUTH_CACHE_SECONDS, unless the answer says ``"cacheable": false``: a revoked
key keeps working for at most that long, while a session (whose member may be removed, or
sign out, at any moment) is asked about on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from dataclasses import dataclass

from cachetools import TTLCache

from common import auth
from common.config import Settings
from common.errors import BadGateway, BadRequest, Forbidden, NotFound, Unauthorized, Unavailable
from common.internal import InternalClient

USER_HEADER = "X-Feedback-User"
ANON_HEADER = "X-Feedback-Anonymous-Id"
CACHE_MAX = 10_000
ANON_ID = re.compile(r"[A-Za-z0-9._-]{16,128}")
REFUSALS = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound}


@dataclass(frozen=True)
class Refusal:
    error: type
    message: str


class Authenticator:
    def __init__(self, settings: Settings, client: InternalClient, identity_service: str | None, identity_path: str | None,
                 gateway_secret: str):
        self.settings = settings
        self.anonymous_key = hashlib.sha256(b"anonymous-id|" + gateway_secret.encode()).digest()
        self.client = client
        self.identity_service = identity_service
        self.identity_path = identity_path
        # Least recently used verdicts go first past CACHE_MAX; each lives AUTH_CACHE_SECONDS.
        self._cache = TTLCache(maxsize=CACHE_MAX, ttl=settings.auth_cache_seconds)
        self._lock = threading.Lock()

    @staticmethod
    def credential(req) -> str | None:
        """The credential a request presents (an API key or a user token), or None."""
        return req.get_header("Authorization") or req.get_header(USER_HEADER)

    def known_good(self, req, slug: str | None) -> bool:
        """Whether this gateway process verified the request's credential a moment ago."""
        try:
            bearer = _bearer(req.get_header("Authorization"))
        except Unauthorized:
            return False
        with self._lock:
            verdict = self._cache.get((slug, bearer, req.get_header(USER_HEADER)))
        return isinstance(verdict, auth.Caller)

    def caller(self, req, slug: str | None, address: str) -> auth.Caller:
        bearer = _bearer(req.get_header("Authorization"))
        user_token = req.get_header(USER_HEADER)
        if bearer and hmac.compare_digest(bearer.encode(), self.settings.admin_token.encode()):
            return auth.Caller(kind=auth.ADMIN)
        if not bearer and not user_token:
            return auth.Caller(kind=auth.ANONYMOUS, user_id=self._anonymous_id(req, slug, address))
        if slug is None and (user_token or not bearer):
            # A user token is only ever checked against the workspace a request is for.
            raise Forbidden("this operation is restricted to the platform operator")
        caller = self._verdict((slug, bearer, user_token), lambda: self._ask(slug, bearer, user_token))
        if slug is not None and caller.key_id and caller.workspace != slug:  # manager or scoped keys alike
            raise Forbidden("this API key belongs to another workspace")
        return caller

    def _ask(self, slug: str | None, api_key: str | None, user_token: str | None) -> tuple[auth.Caller | Refusal, bool]:
        """The verdict on a credential, and whether it may be cached."""
        if self.identity_service is None:
            raise Unauthorized("no service can verify credentials")
        status, body = self.client.json(
            self.identity_service, "POST", self.identity_path, {"workspace": slug, "apiKey": api_key, "userToken": user_token}
        )
        if status == 200:
            cacheable = body.pop("cacheable", True)
            return auth.Caller(**body), cacheable is not False
        message = (body.get("error") if isinstance(body, dict) else None) or "authentication failed"
        if status not in REFUSALS:
            # The owner could not decide (e.g. its database is down): pass that on, uncached.
            raise (Unavailable if status == 503 else BadGateway)(f"cannot verify credentials now: {message}")
        return Refusal(REFUSALS[status], message), True

    def _verdict(self, key: tuple, ask):
        with self._lock:
            value = self._cache.get(key)
        if value is None:
            value, cacheable = ask()
            if cacheable:
                with self._lock:
                    self._cache[key] = value
        if isinstance(value, Refusal):
            raise value.error(value.message)  # refusals are cached too: a bad key cannot hammer the owner
        return value

    def _anonymous_id(self, req, slug: str | None, address: str) -> str:
        """A visitor's stable, unguessable identity in one workspace.

        A client-kept id (``X-Feedback-Anonymous-Id``) and the fallback of address and user
        agent are hashed in separate namespaces, so no header value can claim the identity
        another visitor gets from their address. The id must be long enough not to be guessed."""
        claimed = req.get_header(ANON_HEADER)
        if claimed is not None:
            if not ANON_ID.fullmatch(claimed):
                raise BadRequest(f"header {ANON_HEADER} must be 16 to 128 letters, digits, '-', '_' or '.' (a random id the client keeps)")
            basis = f"id|{claimed}"
        else:
            basis = f"address|{address}|{req.user_agent or ''}"
        digest = hmac.new(self.anonymous_key, f"{slug}|{basis}".encode(), hashlib.sha256)
        return "anon:" + digest.hexdigest()[:32]


def _bearer(value: str | None) -> str | None:
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("the Authorization header must be 'Bearer <API key>'")
    return token.strip()
