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
   and carry the nonce; its ``email`` (not marked unverified) is the person.

A member of the team signs in as such when the workspace set no team domain or the address is
of it; anyone else signs in as an end user, if the workspace offers OpenID Connect to them.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from urllib.parse import urlsplit

import requests
import urllib3
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from common import auth
from common.errors import BadGateway, BadRequest, Forbidden
from common.ids import iso, now
from common.validation import check
from people import schemas
from people.config import PeopleConfig
from people.repository import OidcRepository
from people.service import PeopleService, normalize_email

DISCOVERY_PATH = "/.well-known/openid-configuration"
CALLBACK_PATH = "/sign-in/oidc/callback"
SCOPE = "openid email profile"
STATE_SECONDS = 600
HTTP_TIMEOUT = 10  # seconds for each request to the provider
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


class OidcSignIn:
    def __init__(self, people: PeopleService, repo: OidcRepository, config: PeopleConfig, http: requests.Session | None = None):
        self.people = people
        self.repo = repo
        self.config = config
        self.http = http or requests.Session()

    # -- the provider's configuration ---------------------------------------------------------

    def provider(self, caller: auth.Caller, slug: str) -> dict:
        """The configuration (managers): never the secret, only whether there is one."""
        self.people.workspaces.require_manager(caller, slug)
        return _provider_shape(self.repo.provider(slug))

    def set_provider(self, caller: auth.Caller, slug: str, body) -> dict:
        self.people._require_owner(caller, slug)
        fields = check(body, schemas.OIDC_PROVIDER)
        fields["issuer"] = fields["issuer"].rstrip("/")
        try:
            discovery = self.discover(fields["issuer"])
        except ProviderError as ex:
            raise BadRequest(f"issuer: {ex}") from None
        fields["issuer"] = discovery["issuer"]
        fields["name"] = fields.get("name", "").strip() or DEFAULT_NAME
        if fields.get("teamEmailDomain"):
            fields["teamEmailDomain"] = fields["teamEmailDomain"].lower()
        fields.setdefault("teamEmailDomain", None)
        at = now()

        def work(session):
            self.repo.set_provider(session, slug, fields, at)
            self.people.repo.record(slug, "oidc.changed", auth.actor(caller),
                                    {"issuer": fields["issuer"], "clientId": fields["clientId"]}, at, session)

        self.people.repo.transaction(work)
        return _provider_shape(self.repo.provider(slug))

    def delete_provider(self, caller: auth.Caller, slug: str) -> None:
        self.people._require_owner(caller, slug)

        def work(session):
            removed = self.repo.delete_provider(session, slug)
            if removed is not None:
                self.people.repo.record(slug, "oidc.changed", auth.actor(caller),
                                        {"issuer": None, "clientId": None}, now(), session)

        self.people.repo.transaction(work)

    # -- signing in ---------------------------------------------------------------------------

    def start(self, slug: str, body) -> dict:
        fields = check(body, schemas.OIDC_START)
        self.people.workspaces.require(slug)
        provider = self._configured(slug)
        origin = self.people.origin(slug, fields.get("origin"))
        discovery = self._discover_now(provider)
        state, nonce, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(64)
        redirect_uri = self.people.site_url(origin, slug, CALLBACK_PATH)
        self.repo.add_state({
            "state": state, "workspace": slug, "nonce": nonce, "codeVerifier": verifier, "redirectUri": redirect_uri,
            "next": self.people._next(slug, fields.get("next")), "expiresAt": now() + timedelta(seconds=STATE_SECONDS),
        })
        client = self._client(provider, redirect_uri)
        url, _ = client.create_authorization_url(discovery["authorization_endpoint"], state=state, nonce=nonce,
                                                 code_verifier=verifier)
        return {"authorizationUrl": url}

    def finish(self, slug: str, body) -> dict:
        fields = check(body, schemas.OIDC_CALLBACK)
        flow = self.repo.spend_state(fields["state"], slug, now())
        if flow is None:
            raise BadRequest("this sign-in is not valid here, was finished already or took too long; start again")
        provider = self._configured(slug)
        discovery = self._discover_now(provider)
        client = self._client(provider, flow["redirectUri"])
        try:
            tokens = client.fetch_token(discovery["token_endpoint"], code=fields["code"], code_verifier=flow["codeVerifier"],
                                        grant_type="authorization_code")
        except requests.RequestException as ex:
            raise BadGateway(f"the identity provider could not be reached: {type(ex).__name__}") from None
        except (AuthlibBaseError, ValueError) as ex:  # an error answer, or not a token response
            raise BadRequest(f"the identity provider refused this sign-in: {getattr(ex, 'error', None) or ex}") from None
        if not tokens.get("id_token"):
            raise BadRequest("the identity provider answered without an id_token")
        try:
            claims = verify_id_token(tokens["id_token"], self._jwks(discovery), discovery["issuer"], provider["clientId"],
                                     flow["nonce"])
        except ProviderError as ex:
            raise BadGateway(f"the identity provider's keys could not be read: {ex}") from None
        except TokenRefused as ex:
            raise BadRequest(f"the identity provider's answer was refused ({ex}); start again") from None
        email = claims.get("email")
        if not isinstance(email, str) or "@" not in email or claims.get("email_verified") is False:
            raise BadRequest("the identity provider did not vouch for an email address; it is needed to sign in here")
        return self._sign_in(slug, provider, normalize_email(email), claims, flow.get("next"))

    def _sign_in(self, slug: str, provider: dict, email: str, claims: dict, next_path: str | None) -> dict:
        """The session of ``email``: a team member's if a member (of the team's domain, where one
        is set), else an end user's where the workspace offers OpenID Connect to them."""
        domain = provider.get("teamEmailDomain")
        name = _claim_text(claims, "name") or _claim_text(claims, "preferred_username") or email.split("@")[0]
        picture = _claim_text(claims, "picture")
        avatar = picture if picture and picture.startswith("https://") else None

        def work(session):
            person = self.people.repo.person_by_email(email, session)
            membership = self.people.repo.membership(slug, person["_id"], session) if person else None
            role = membership["role"] if membership and (not domain or email.rsplit("@", 1)[1] == domain) else None
            if role is None and "oidc" not in self.people.end_user_methods(slug):
                raise Forbidden(
                    "this workspace offers sign-in with its identity provider to its team only"
                    + (f" (addresses at {domain})" if domain else "") + "; sign in another way"
                )
            if person is None:
                person = self.people.repo.person_for_email(email, name[:100], avatar, now(), session)
            started = self.people._start(slug, person, role, "oidc", session)
            return {**started, "next": next_path}

        return self.people.repo.transaction(work)

    # -- the provider, over HTTP --------------------------------------------------------------

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
            response = self.http.get(url, timeout=HTTP_TIMEOUT, allow_redirects=False)
        except (requests.RequestException, urllib3.exceptions.HTTPError, ValueError) as ex:  # ValueError: no URL at all
            raise ProviderError(f"{what} could not be fetched from {url}: {type(ex).__name__}") from None
        if response.status_code != 200:
            raise ProviderError(f"{what} could not be fetched from {url}: HTTP {response.status_code}")
        try:
            document = response.json()
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise ProviderError(f"{what} at {url} is not a JSON object")
        return document

    def _check_url(self, url: str, what: str) -> None:
        parts = urlsplit(url)
        allowed = ("https", "http") if self.config.oidc_allow_http else ("https",)
        if parts.scheme not in allowed or not parts.hostname:
            raise ProviderError(f"{what} must be an https URL")

    def _client(self, provider: dict, redirect_uri: str) -> OAuth2Session:
        secret = provider.get("clientSecret")
        client = OAuth2Session(
            provider["clientId"], secret, scope=SCOPE, redirect_uri=redirect_uri, code_challenge_method="S256",
            token_endpoint_auth_method="client_secret_basic" if secret else "none", default_timeout=HTTP_TIMEOUT,
        )
        client.trust_env = False  # the provider is asked directly, as configured
        return client

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
