"""OpenID Connect providers that attack the platform, against the running stack.

Each test runs providers of its own in this process: ``provider`` on ``localhost`` (which the
stack's PEOPLE_OIDC_ALLOWED_HOSTS lets through, as an operator would allow a provider on their
network) and ``internal`` on 127.0.0.2, a loopback address nobody allowed: it stands for what
lives inside the platform's network (a database, another service, the metadata address), and
answers every request with a secret that must never reach the caller. A provider serves the
routes a test gives it: discovery, keys (JWKS, of the test's own RSA key) and a token endpoint
whose id_token carries the claims the test chooses, or answers that redirect, drip one byte at
a time, or never end.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import RSAKey

from testkit.api import assert_error
from testkit.http import Server

from .conftest import OIDC_PER_WORKSPACE, OIDC_TIMEOUT
from .helpers import join

CLIENT_ID = "hostile-test-client"
SECRET = "internal-secret-7f3a"  # what the internal address answers: never shown to anyone
DISCOVERY = "/.well-known/openid-configuration"
MARGIN = 12  # seconds past the deadline any answer may take on a loaded machine
DRIP_SECONDS = 0.5  # between two bytes of a dripping answer
# gunicorn worker processes of the stack's people API: each keeps its own bound.
PEOPLE_PROCESSES = int(os.environ.get("WEB_CONCURRENCY") or 2)


class Provider(Server):
    """A test server on ``host`` (named ``name`` in its URL), to turn hostile route by route;
    ``fallback`` answers what no route serves."""

    def __init__(self, host: str = "127.0.0.1", name: str = "localhost"):
        super().__init__(host, name)
        self.fallback = lambda req: req.send_json(404, {"error": "not found"})

    # -- a well-behaved provider, to turn hostile route by route ---------------------------------

    def serve_oidc(self, key: RSAKey, prefix: str = "") -> str:
        """Discovery, keys and a token endpoint under ``prefix``; the issuer. The next token
        answer's id_token carries ``self.claims`` (set by the test, with the sign-in's nonce)."""
        issuer = self.url + prefix
        self.claims: dict = {}
        self.discovery = {
            "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
            "jwks_uri": issuer + "/jwks", "response_types_supported": ["code"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }
        self.routes[prefix + DISCOVERY] = lambda req: req.send_json(200, self.discovery)
        self.routes[prefix + "/jwks"] = lambda req: req.send_json(200, {"keys": [key.as_dict(private=False)]})

        def token(req):
            at = int(time.time())
            claims = {"iss": issuer, "sub": "ada", "aud": CLIENT_ID, "iat": at, "exp": at + 300, **self.claims}
            id_token = jwt.encode({"alg": "RS256", "kid": key.kid}, {k: v for k, v in claims.items() if v is not None}, key)
            req.send_json(200, {"access_token": "at", "token_type": "Bearer", "id_token": id_token})

        self.routes[prefix + "/token"] = token
        return issuer

    def drip(self, body: bytes):
        """A handler that sends ``body`` one byte every DRIP_SECONDS (each well inside any read
        timeout), until done, the client leaves or the test ends."""

        def handler(req):
            req.send_response(200)
            req.send_header("Content-Type", "application/json")
            req.send_header("Content-Length", str(len(body)))
            req.end_headers()
            for i in range(len(body)):
                if self.stop.wait(DRIP_SECONDS):
                    return
                req.wfile.write(body[i:i + 1])
                req.wfile.flush()

        return handler


@pytest.fixture
def provider():
    server = Provider()
    yield server
    server.close()


@pytest.fixture
def internal():
    """What lives inside: answers anything, with a secret, to whoever reaches it."""
    server = Provider("127.0.0.2", "127.0.0.2")
    server.fallback = lambda req: req.send_json(
        400 if req.command == "POST" else 200,
        {"issuer": SECRET, "error": SECRET, "error_description": SECRET, "keys": SECRET},
        headers={"Server": SECRET},
    )
    yield server
    server.close()


@pytest.fixture(scope="module")
def key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": "hostile-test-key"}, private=True)


def configure(workspace, issuer: str):
    return workspace.api.put(f"{workspace.path}/oidc", key=workspace.key,
                             json={"issuer": issuer, "clientId": CLIENT_ID, "clientSecret": "s3cret-" + uuid.uuid4().hex})


def configured(workspace, issuer: str) -> None:
    r = configure(workspace, issuer)
    assert r.status_code == 200, r.text
    r = workspace.api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key,
                            json={"endUserMethods": ["email", "oidc"]})
    assert r.status_code == 200, r.text


def start(workspace) -> dict:
    """Begin a sign-in: the authorization URL's query (state, nonce, ...)."""
    r = workspace.api.post(f"{workspace.path}/sign-in/oidc", json={})
    assert r.status_code == 200, r.text
    return {k: v[0] for k, v in parse_qs(urlsplit(r.json()["authorizationUrl"]).query).items()}


def callback(workspace, state: str, code: str = "the-code"):
    return workspace.api.post(f"{workspace.path}/sign-in/oidc/callback", json={"state": state, "code": code})


def sign_in(workspace, provider: Provider, **claims):
    """A whole sign-in whose id_token carries ``claims`` (and the sign-in's nonce)."""
    query = start(workspace)
    provider.claims = {"nonce": query["nonce"], **claims}
    return callback(workspace, query["state"])


def email() -> str:
    return f"ada-{uuid.uuid4().hex[:8]}@example.com"


def concurrently(calls) -> list[tuple[requests.Response | Exception, float, float]]:
    """Run ``calls`` at once: for each, (answer or exception, seconds it took, when it ended)."""

    def timed(call):
        began = time.monotonic()
        try:
            answer = call()
        except requests.RequestException as ex:
            answer = ex
        ended = time.monotonic()
        return answer, ended - began, ended

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(timed, calls))


def raw_start(workspace):
    """A start through a connection of its own (the session-wide client is not for threads)."""
    return lambda: requests.post(f"{workspace.api.base}{workspace.path}/sign-in/oidc", json={},
                                 timeout=OIDC_TIMEOUT + MARGIN)


# -- (a) an issuer inside the network ----------------------------------------------------------


def test_an_issuer_on_an_internal_address_is_refused_before_any_request(workspace, internal):
    for issuer, words in [
        (internal.url, "resolves to 127.0.0.2, a loopback address"),
        (internal.url + "/tenant", "resolves to 127.0.0.2, a loopback address"),
        (f"http://[::1]:{internal.port}", "resolves to ::1, a loopback address"),
        ("http://169.254.169.254", "resolves to 169.254.169.254, a link-local address"),
        ("http://10.11.12.13:8000", "resolves to 10.11.12.13, a private address"),
    ]:
        r = configure(workspace, issuer)
        message = assert_error(r, 400)
        assert words in message and "which OpenID Connect sign-in may not call" in message, message
        assert SECRET not in r.text and SECRET not in str(r.headers)
    assert internal.hits == [], "nothing was sent to the internal address"
    assert workspace.api.get(f"{workspace.path}/oidc", key=workspace.key).json()["configured"] is False


def test_an_issuer_that_is_no_url_is_refused(workspace):
    """What urlsplit cannot read (an unclosed IPv6 bracket, a port that is no number) is a 400
    naming the issuer, not a 500 (found by the conformance run)."""
    message = assert_error(configure(workspace, "http://[::1"), 400)
    assert message == "issuer: the issuer must be an https URL", message
    assert "not a valid URL" in assert_error(configure(workspace, "https://idp.example:port/"), 400)


def test_endpoints_inside_the_network_are_refused_when_configured(workspace, provider, key):
    issuer = provider.serve_oidc(key)
    provider.discovery["token_endpoint"] = "http://127.0.0.2:8000/token"
    message = assert_error(configure(workspace, issuer), 400)
    assert "token_endpoint" in message and "127.0.0.2, a loopback address" in message
    provider.discovery["token_endpoint"] = issuer + "/token"
    provider.discovery["jwks_uri"] = "http://169.254.169.254/latest/meta-data/"
    assert "a link-local address" in assert_error(configure(workspace, issuer), 400)


# -- (b) redirects ------------------------------------------------------------------------------


def test_a_discovery_redirect_is_followed_only_where_the_guard_allows(workspace, provider, internal, key):
    issuer = provider.serve_oidc(key, "/moved")
    # The control: a redirect to another path of the provider is followed, and checked again.
    document = provider.routes.pop("/moved" + DISCOVERY)
    provider.routes["/moved" + DISCOVERY] = lambda req: req.redirect("/documents/openid-configuration")
    provider.routes["/documents/openid-configuration"] = document
    assert configure(workspace, issuer).status_code == 200

    # A redirect inward is refused; nothing is sent there.
    provider.routes["/moved" + DISCOVERY] = lambda req: req.redirect(internal.url + DISCOVERY, 307)
    r = configure(workspace, issuer)
    message = assert_error(r, 400)
    assert "redirected to a URL that resolves to 127.0.0.2, a loopback address" in message
    assert SECRET not in r.text
    provider.routes["/moved" + DISCOVERY] = lambda req: req.redirect("http://169.254.169.254/latest/meta-data/", 301)
    assert "169.254.169.254, a link-local address" in assert_error(configure(workspace, issuer), 400)
    # Nor are redirects followed forever.
    provider.routes["/moved" + DISCOVERY] = lambda req: req.redirect("/moved" + DISCOVERY)
    assert "redirects" in assert_error(configure(workspace, issuer), 400)
    assert internal.hits == []


def test_a_token_endpoint_redirect_is_not_followed_and_its_target_never_shown(workspace, provider, internal, key):
    issuer = provider.serve_oidc(key)
    configured(workspace, issuer)
    provider.routes["/token"] = lambda req: req.redirect(internal.url + "/token", 307)
    query = start(workspace)
    r = callback(workspace, query["state"])
    message = assert_error(r, 502)
    assert "HTTP 307" in message and SECRET not in r.text
    assert internal.hits == [], "the code and the client's secret went nowhere else"


def test_a_keys_redirect_inward_is_refused(workspace, provider, internal, key):
    issuer = provider.serve_oidc(key)
    configured(workspace, issuer)
    # The control: keys that moved on the provider are followed.
    provider.routes["/jwks-moved"] = provider.routes["/jwks"]
    provider.routes["/jwks"] = lambda req: req.redirect("/jwks-moved", 308)
    assert sign_in(workspace, provider, email=email(), email_verified=True).status_code == 201

    provider.routes["/jwks"] = lambda req: req.redirect(internal.url + "/jwks", 302)
    r = sign_in(workspace, provider, email=email(), email_verified=True)
    assert "redirected to a URL that resolves to 127.0.0.2" in assert_error(r, 502)
    assert SECRET not in r.text and internal.hits == []


def test_a_token_error_shows_only_its_standard_code(workspace, provider, key):
    issuer = provider.serve_oidc(key)
    configured(workspace, issuer)
    for error, shown in [("invalid_grant", "invalid_grant"), (SECRET, None)]:
        provider.routes["/token"] = lambda req, error=error: req.send_json(
            400, {"error": error, "error_description": f"{SECRET}: the code was used at db-7.internal"})
        query = start(workspace)
        r = callback(workspace, query["state"])
        message = assert_error(r, 400)
        assert "refused this sign-in" in message and SECRET not in r.text
        if shown:
            assert shown in message


# -- (c), (e) slow providers and the bound on them ------------------------------------------------


def test_a_dripping_provider_is_cut_at_the_deadline_and_the_platform_stays_responsive(
        workspace, other_workspace, provider, key):
    issuer = provider.serve_oidc(key)
    configured(workspace, issuer)
    member = join(other_workspace, email())
    provider.routes[DISCOVERY] = provider.drip(json.dumps(provider.discovery).encode())

    starts = [raw_start(workspace)] * 24
    me = [lambda: (time.sleep(1), requests.get(f"{workspace.api.base}/me", timeout=MARGIN,
                                               headers={"Authorization": f"Bearer {member['token']}"}))[1]] * 3
    results = concurrently(starts + me)

    for answer, took, _ in results[len(starts):]:
        assert not isinstance(answer, Exception), f"another workspace's session was not served: {answer!r}"
        assert answer.status_code == 200, answer.text
    statuses = []
    for answer, took, _ in results[:len(starts)]:
        assert not isinstance(answer, Exception), f"a start was held past the deadline: {answer!r}"
        assert took < OIDC_TIMEOUT + MARGIN
        statuses.append(answer.status_code)
        if answer.status_code == 502:
            assert "timeout" in answer.json()["error"], answer.text
        else:
            assert answer.status_code == 503 and answer.headers.get("Retry-After"), answer.text
    assert 502 in statuses and 503 in statuses
    # And once the provider behaves again, so does the sign-in.
    provider.routes[DISCOVERY] = lambda req: req.send_json(200, provider.discovery)
    assert start(workspace)["state"]


def test_starts_beyond_the_bound_of_a_workspace_are_turned_away_at_once(workspace, other_workspace, provider, key):
    slow_issuer = provider.serve_oidc(key, "/slow")
    configured(workspace, slow_issuer)
    other = Provider()
    try:
        configured(other_workspace, other.serve_oidc(key))
        provider.routes["/slow" + DISCOVERY] = provider.drip(json.dumps(provider.discovery).encode())

        results = concurrently([raw_start(workspace)] * 8 + [raw_start(other_workspace)])
    finally:
        other.close()

    answers = [answer for answer, _, _ in results]
    assert not any(isinstance(a, Exception) for a in answers), answers
    held = [ended for answer, _, ended in results[:8] if answer.status_code == 502]
    turned_away = [(answer, ended) for answer, _, ended in results[:8] if answer.status_code == 503]
    assert len(held) + len(turned_away) == 8, [a.status_code for a in answers]
    assert 1 <= len(held) <= OIDC_PER_WORKSPACE * PEOPLE_PROCESSES
    for answer, ended in turned_away:
        assert int(answer.headers["Retry-After"]) >= 1 and "try again" in answer.json()["error"]
        assert ended < min(held), "a start beyond the bound is answered at once, not after a held one"
    # Another workspace's sign-in is not held up by this one's provider.
    assert answers[8].status_code == 200, answers[8].text


# -- (d) answers too large ----------------------------------------------------------------------


def test_a_huge_discovery_document_is_refused(workspace, provider, key):
    issuer = provider.serve_oidc(key)
    huge = json.dumps({**provider.discovery, "padding": "x" * 10_000_000}).encode()
    provider.routes[DISCOVERY] = lambda req: (req.send_response(200), req.send_header("Content-Length", str(len(huge))),
                                              req.end_headers(), req.wfile.write(huge))

    def without_length(req):  # no Content-Length: only reading tells how large it is
        req.send_response(200)
        req.send_header("Connection", "close")
        req.end_headers()
        req.close_connection = True
        for i in range(0, len(huge), 65536):
            req.wfile.write(huge[i:i + 65536])

    for route in (provider.routes[DISCOVERY], without_length):
        provider.routes[DISCOVERY] = route
        message = assert_error(configure(workspace, issuer), 400)
        assert "larger than 262144 bytes" in message, message


def test_huge_keys_end_the_sign_in(workspace, provider, key):
    issuer = provider.serve_oidc(key)
    configured(workspace, issuer)
    keys = {"keys": [key.as_dict(private=False)] * 2000}
    provider.routes["/jwks"] = lambda req: req.send_json(200, keys)
    r = sign_in(workspace, provider, email=email(), email_verified=True)
    assert "larger than 262144 bytes" in assert_error(r, 502)


# -- (f) finding 7: an address the provider does not vouch for -------------------------------------


def test_an_id_token_must_mark_its_email_verified(workspace, provider, key):
    issuer = provider.serve_oidc(key)
    configured(workspace, issuer)
    for verified in (None, False, "true", 1):
        r = sign_in(workspace, provider, email=email(), email_verified=verified)
        assert "did not vouch for an email address" in assert_error(r, 400), verified
    # The control: the same provider, vouching.
    address = email()
    r = sign_in(workspace, provider, email=address, email_verified=True)
    assert r.status_code == 201, r.text
    assert r.json()["user"]["email"] == address
