"""Signing in with a workspace's OpenID Connect provider (authorization code with PKCE).

An owner configures the provider: its issuer URL, a client id and secret registered there, the
button's label and, optionally, the one email domain whose team members sign in as such. The
issuer's discovery document is fetched when it is configured (an issuer without one is
refused) and again at each sign-in, so moved endpoints are followed.

A sign-in has two steps, both through the API, so the board site keeps no secret:

1. ``start``: a fresh ``state``, ``nonce`` and PKCE verifier are stored (10 minutes, one use);
   the browser is sent to the provider's authorization URL, which returns it to the board's
   ``/sign-in/oidc/callback`` page on the origin it came from.
2. ``finish``: that page posts ``state`` and ``code``. The state is spent (once, on its own
   workspace); the code is traded for tokens with the verifier; the id_token must be signed
   by a key of the provider's JWKS, name the discovery's issuer and this client, be unexpired
   and carry the nonce; its ``email``, marked ``email_verified: true``, is the person.

A member of the team signs in as such when the workspace set no team domain or the address is
of it; anyone else signs in as an end user, if the workspace offers OpenID Connect to them.

The provider is a URL an owner typed, so every fetch of it (discovery, keys, the token
exchange) goes through the platform's outbound-fetch guard (:mod:`common.outbound`): only public
addresses (or PEOPLE_OIDC_ALLOWED_HOSTS), the checked address connected to, redirects followed
only for the GETs and checked again at each hop, the token POST never redirected, a wall-clock
deadline on each exchange (PEOPLE_OIDC_TIMEOUT_SECONDS) and answers of at most MAX_ANSWER_BYTES.
Exchanges in flight are bounded per workspace and per process (:class:`ProviderSlots`): beyond
the bound a request is answered 503 at once, so a provider that drips its answers holds a few of
the threads that also check every authenticated request's credential, never all of them.
"""

from __future__ import annotations

import base64
import secrets
import threading
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta
from urllib.parse import quote, urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from common import auth
from common.errors import BadGateway, BadRequest, Forbidden, Unavailable
from common.ids import iso, now
from common.outbound import FetchError, OutboundClient, UrlPolicy, UrlRefused
from common.validation import check
from people import schemas
from people.config import PeopleConfig
from people.repository import OidcRepository, PeopleRepository
from people.service import PeopleService, normalize_email

DISCOVERY_PATH = "/.well-known/openid-configuration"
CALLBACK_PATH = "/sign-in/oidc/callback"
SCOPE = "openid email profile"
STATE_SECONDS = 600
MAX_ANSWER_BYTES = 256 * 1024  # the most of a discovery document, a JWKS or a token answer read
MAX_REDIRECTS = 3  # hops a discovery or JWKS GET may take (the token POST takes none)
PURPOSE = "OpenID Connect sign-in"  # ends a refused URL's message: "... which <PURPOSE> may not call"
USER_AGENT = "feedback-people/1.0 (OpenID Connect)"
# The error codes of a token endpoint's refusal (RFC 6749, 5.2): the only words of the
# provider's answer shown to the caller; its free text (error_description) never is.
TOKEN_ERRORS = ("invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
                "invalid_scope")
LEEWAY = 60  # seconds of clock skew between the provider and us, for exp and iat
DEFAULT_NAME = "Single sign-on"
# Signature algorithms an id_token may use: asymmetric ones only (a symmetric one would be keyed
# with the client secret, which this service holds; the JWKS is the provider's word).
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]


class ProviderError(Exception):
    """The provider could not be asked (unreachable, or an answer that is not what OIDC says)."""


class TokenRefused(Exception):
    """An id_token that does not prove who signed in."""


def verify_id_token(id_token: str, jwks: dict, issuer: str, client_id: str, nonce: str) -> dict:
    """The claims of ``id_token`` if it is signed by a key of ``jwks``, issued by ``issuer`` for
    ``client_id``, unexpired and bound to ``nonce``; else :class:`TokenRefused`."""
    try:
        keys = KeySet.import_key_set(jwks)
        token = jwt.decode(id_token, keys, algorithms=ALGORITHMS)
        jwt.JWTClaimsRegistry(
            leeway=LEEWAY,
            iss={"essential": True, "value": issuer},
            aud={"essential": True, "value": client_id},
            exp={"essential": True},
            nonce={"essential": True, "value": nonce},
        ).validate(token.claims)
    except (JoseError, ValueError, TypeError, KeyError) as ex:
        raise TokenRefused(f"{type(ex).__name__}: {ex}") from None
    claims = token.claims
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != client_id:  # OIDC Core 3.1.3.7, step 5
        raise TokenRefused("the token names several audiences and another authorized party")
    return claims


class ProviderSlots:
    """Exchanges with providers in flight in this process: at most ``per_workspace`` for one
    workspace and ``total`` for all. :meth:`hold` answers 503 at once beyond them (a queue would
    hold the very threads the bound is there to keep free)."""

    def __init__(self, per_workspace: int, total: int, retry_after: int):
        self.per_workspace = per_workspace
        self.total = total
        self.retry_after = retry_after
        self._busy: Counter[str] = Counter()
        self._lock = threading.Lock()

    @contextmanager
    def hold(self, slug: str):
        with self._lock:
            if self._busy[slug] >= self.per_workspace or sum(self._busy.values()) >= self.total:
                raise Unavailable("the identity provider is being asked already; try again in a few seconds",
                                  headers={"Retry-After": str(self.retry_after)})
            self._busy[slug] += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy[slug] -= 1
                if self._busy[slug] <= 0:
                    del self._busy[slug]


class OidcSignIn:
    def __init__(self, people: PeopleService, repo: OidcRepository, config: PeopleConfig, http: OutboundClient | None = None):
        self.people = people
        self.repo = repo
        self.config = config
        self.policy = UrlPolicy(allow_http=config.oidc_allow_http, allowed_hosts=config.oidc_allowed_hosts,
                                dns_timeout=min(3.0, config.oidc_timeout_seconds), purpose=PURPOSE)
        self.http = http or OutboundClient(self.policy, timeout=config.oidc_timeout_seconds, max_bytes=MAX_ANSWER_BYTES,
                                           user_agent=USER_AGENT, max_redirects=MAX_REDIRECTS)
        self.slots = ProviderSlots(config.oidc_concurrency_per_workspace, config.oidc_concurrency,
                                   retry_after=max(1, round(config.oidc_timeout_seconds)))

    # -- the provider's configuration ---------------------------------------------------------

    def provider(self, caller: auth.Caller, slug: str) -> dict:
        """The configuration (managers): never the secret, only whether there is one."""
        self.people.workspaces.require_manager(caller, slug)
        return _provider_shape(self.repo.provider(slug))

    def set_provider(self, caller: auth.Caller, slug: str, body) -> dict:
        self.people._require_owner(caller, slug)
        fields = check(body, schemas.OIDC_PROVIDER)
        fields["issuer"] = fields["issuer"].rstrip("/")
        with self.slots.hold(slug):
            try:
                discovery = self.discover(fields["issuer"])
                # The endpoints this service will call must pass the guard now, not at the first sign-in.
                for key in ("token_endpoint", "jwks_uri"):
                    self._vet(discovery[key], key)
            except ProviderError as ex:
                raise BadRequest(f"issuer: {ex}") from None
        fields["issuer"] = discovery["issuer"]
        fields["name"] = fields.get("name", "").strip() or DEFAULT_NAME
        if fields.get("teamEmailDomain"):
            fields["teamEmailDomain"] = fields["teamEmailDomain"].lower()
        fields.setdefault("teamEmailDomain", None)
        at = now()

        def work(tx: PeopleRepository) -> None:
            tx.add(self.repo.set_provider(slug, fields, at))
            tx.add(tx.audit_entry(slug, "oidc.changed", auth.actor(caller),
                                  {"issuer": fields["issuer"], "clientId": fields["clientId"]}, at))

        self.people.repo.unit_of_work(work)
        return _provider_shape(self.repo.provider(slug))

    def delete_provider(self, caller: auth.Caller, slug: str) -> None:
        self.people._require_owner(caller, slug)

        def work(tx: PeopleRepository) -> None:
            tx.add(*self.repo.delete_provider(slug))
            removed, _ = tx.flush()
            if removed:
                tx.add(tx.audit_entry(slug, "oidc.changed", auth.actor(caller), {"issuer": None, "clientId": None}, now()))

        self.people.repo.unit_of_work(work)

    # -- signing in ---------------------------------------------------------------------------

    def start(self, slug: str, body) -> dict:
        fields = check(body, schemas.OIDC_START)
        self.people.workspaces.require(slug)
        provider = self._configured(slug)
        origin = self.people.origin(slug, fields.get("origin"))
        with self.slots.hold(slug):
            discovery = self._discover_now(provider)
        state, nonce, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(64)
        redirect_uri = self.people.site_url(origin, slug, CALLBACK_PATH)
        self.repo.add_state({
            "state": state, "workspace": slug, "nonce": nonce, "codeVerifier": verifier, "redirectUri": redirect_uri,
            "next": self.people._next(slug, fields.get("next")), "expiresAt": now() + timedelta(seconds=STATE_SECONDS),
        })
        url = add_params_to_uri(discovery["authorization_endpoint"], [
            ("response_type", "code"), ("client_id", provider["clientId"]), ("redirect_uri", redirect_uri),
            ("scope", SCOPE), ("state", state), ("nonce", nonce),
            ("code_challenge", create_s256_code_challenge(verifier)), ("code_challenge_method", "S256"),
        ])
        return {"authorizationUrl": url}

    def finish(self, slug: str, body) -> dict:
        fields = check(body, schemas.OIDC_CALLBACK)
        # The slot first: a sign-in turned away for a busy provider keeps its state for a retry.
        with self.slots.hold(slug):
            flow = self.repo.spend_state(fields["state"], slug, now())
            if flow is None:
                raise BadRequest("this sign-in is not valid here, was finished already or took too long; start again")
            provider = self._configured(slug)
            discovery = self._discover_now(provider)
            tokens = self._exchange_code(discovery["token_endpoint"], provider, flow, fields["code"])
            try:
                claims = verify_id_token(tokens["id_token"], self._jwks(discovery), discovery["issuer"],
                                         provider["clientId"], flow["nonce"])
            except ProviderError as ex:
                raise BadGateway(f"the identity provider's keys could not be read: {ex}") from None
            except TokenRefused as ex:
                raise BadRequest(f"the identity provider's answer was refused ({ex}); start again") from None
        email = claims.get("email")
        # Only an address the provider vouches for: a claim left out is no promise (OIDC Core 5.1).
        if not isinstance(email, str) or "@" not in email or claims.get("email_verified") is not True:
            raise BadRequest("the identity provider did not vouch for an email address (a verified email); it is "
                             "needed to sign in here")
        return self._sign_in(slug, provider, normalize_email(email), claims, flow.get("next"))

    def _sign_in(self, slug: str, provider: dict, email: str, claims: dict, next_path: str | None) -> dict:
        """The session of ``email``: a team member's if a member (of the team's domain, where one
        is set), else an end user's where the workspace offers OpenID Connect to them."""
        domain = provider.get("teamEmailDomain")
        name = _claim_text(claims, "name") or _claim_text(claims, "preferred_username") or email.split("@")[0]
        picture = _claim_text(claims, "picture")
        avatar = picture if picture and picture.startswith("https://") else None

        def work(tx: PeopleRepository) -> dict:
            person = tx.person_by_email(email)
            membership = tx.membership(slug, person["_id"]) if person else None
            role = membership["role"] if membership and (not domain or email.rsplit("@", 1)[1] == domain) else None
            if role is None and "oidc" not in self.people.end_user_methods(slug):
                raise Forbidden(
                    "this workspace offers sign-in with its identity provider to its team only"
                    + (f" (addresses at {domain})" if domain else "") + "; sign in another way"
                )
            if person is None:
                person = tx.person_for_email(email, name[:100], avatar, now())
            started, writes = self.people._start(slug, person, role, "oidc")
            tx.add(*writes)
            return {**started, "next": next_path}

        return self.people.repo.unit_of_work(work)

    # -- the provider, over HTTP (through the outbound-fetch guard) ---------------------------

    def discover(self, issuer: str) -> dict:
        """The issuer's discovery document, checked: it names this issuer and the endpoints a
        sign-in needs."""
        self._check_url(issuer, "the issuer")
        document = self._get_json(issuer + DISCOVERY_PATH, "its discovery document")
        if document.get("issuer", "").rstrip("/") != issuer:
            raise ProviderError(f"the discovery document names another issuer ({str(document.get('issuer'))[:200]})")
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(key), str):
                raise ProviderError(f"the discovery document has no {key}")
            self._check_url(document[key], key)
        return document

    def _discover_now(self, provider: dict) -> dict:
        try:
            return self.discover(provider["issuer"])
        except ProviderError as ex:
            raise BadGateway(f"the identity provider could not be asked: {ex}") from None

    def _jwks(self, discovery: dict) -> dict:
        """The provider's keys, read at each sign-in: a rotated key is known at once."""
        jwks = self._get_json(discovery["jwks_uri"], "its keys (JWKS)")
        if not isinstance(jwks.get("keys"), list):
            raise ProviderError("the JWKS has no keys")
        return jwks

    def _get_json(self, url: str, what: str) -> dict:
        try:
            answer = self.http.get(url, headers={"Accept": "application/json"}, follow_redirects=True)
        except FetchError as ex:
            raise ProviderError(f"{what} could not be fetched from {url[:300]}: {ex}") from None
        if answer.status != 200:
            raise ProviderError(f"{what} could not be fetched from {url[:300]}: HTTP {answer.status}")
        try:
            document = answer.json()
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise ProviderError(f"{what} at {url[:300]} is not a JSON object")
        return document

    def _exchange_code(self, token_endpoint: str, provider: dict, flow: dict, code: str) -> dict:
        """The token answer for ``code`` (RFC 6749 4.1.3 with PKCE): client_secret_basic when
        the client has a secret, the client id alone otherwise. Not redirected: the code and
        the client's credentials go to the token endpoint the discovery document names or
        nowhere."""
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": flow["redirectUri"],
                "code_verifier": flow["codeVerifier"], "client_id": provider["clientId"]}
        headers = {"Accept": "application/json"}
        secret = provider.get("clientSecret")
        if secret:  # RFC 6749 2.3.1: each form-encoded, then joined and base64-encoded
            pair = f"{quote(provider['clientId'], safe='')}:{quote(secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        try:
            answer = self.http.post(token_endpoint, form=form, headers=headers)
        except FetchError as ex:
            raise BadGateway(f"the identity provider's token endpoint could not be reached: {ex}") from None
        try:
            tokens = answer.json()
        except ValueError:
            tokens = None
        if answer.status in (400, 401) and isinstance(tokens, dict) and "error" in tokens:
            code_given = tokens.get("error")
            shown = f" ({code_given})" if code_given in TOKEN_ERRORS else ""
            raise BadRequest(f"the identity provider refused this sign-in{shown}; start again")
        if answer.status != 200:
            raise BadGateway(f"the identity provider's token endpoint answered HTTP {answer.status}")
        if not isinstance(tokens, dict):
            raise BadGateway("the identity provider's token endpoint did not answer a JSON object")
        if not isinstance(tokens.get("id_token"), str) or not tokens["id_token"]:
            raise BadRequest("the identity provider answered without an id_token")
        return tokens

    def _check_url(self, url: str, what: str) -> None:
        try:
            parts = urlsplit(url)
            hostname = parts.hostname
        except ValueError:  # e.g. an unclosed "[" of an IPv6 address, a port that is no number
            raise ProviderError(f"{what} must be an https URL") from None
        allowed = ("https", "http") if self.config.oidc_allow_http else ("https",)
        if parts.scheme not in allowed or not hostname:
            raise ProviderError(f"{what} must be an https URL")

    def _vet(self, url: str, what: str) -> None:
        """``url`` passes the outbound-fetch guard (the policy alone: nothing is sent)."""
        try:
            self.policy.check(url, timeout=self.config.oidc_timeout_seconds)
        except UrlRefused as ex:
            raise ProviderError(f"{what} {ex}") from None

    def _configured(self, slug: str) -> dict:
        provider = self.repo.provider(slug)
        if provider is None:
            raise BadRequest("this workspace has no identity provider configured for sign-in")
        return provider


def _provider_shape(doc: dict | None) -> dict:
    if doc is None:
        return {"configured": False, "issuer": None, "clientId": None, "hasClientSecret": False, "name": None,
                "teamEmailDomain": None, "updatedAt": None}
    return {"configured": True, "issuer": doc["issuer"], "clientId": doc["clientId"],
            "hasClientSecret": bool(doc.get("clientSecret")), "name": doc["name"],
            "teamEmailDomain": doc.get("teamEmailDomain"), "updatedAt": iso(doc["updatedAt"])}


def _claim_text(claims: dict, name: str) -> str | None:
    value = claims.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None
