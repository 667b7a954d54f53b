"""The internal signature binds service, method, path, query, body, caller, time, a nonce spent
once, and the covered headers; the kit's middleware holds every service to it."""

import time

import falcon.testing
import pytest
from prometheus_client import REGISTRY

from common import auth
from common.app import InternalAuth, create_app
from common.public_api import CLIENT_HEADER

PATH = "/v1/workspaces/acme/settings"
BODY = b'{"primaryColor": "#000000"}'


def test_signature_round_trip_and_tampering():
    caller = auth.Caller(kind=auth.MANAGER, workspace="acme", key_id="k1")
    headers = auth.signed_headers("secret", "workspaces", "PATCH", PATH, "a=1", BODY, caller)
    assert auth.verify("secret", "workspaces", "PATCH", PATH, "a=1", BODY, headers)
    assert auth.Caller.from_header(headers[auth.CALLER_HEADER]) == caller
    assert not auth.verify("other", "workspaces", "PATCH", PATH, "a=1", BODY, headers)
    assert not auth.verify("secret", "posts", "PATCH", PATH, "a=1", BODY, headers), "another service"
    assert not auth.verify("secret", "workspaces", "DELETE", PATH, "a=1", BODY, headers)
    assert not auth.verify("secret", "workspaces", "PATCH", "/v1/workspaces/evil/settings", "a=1", BODY, headers)
    assert not auth.verify("secret", "workspaces", "PATCH", PATH, "a=2", BODY, headers), "another query"
    assert not auth.verify("secret", "workspaces", "PATCH", PATH, "a=1", b'{"primaryColor": "#ffffff"}', headers), "another body"
    forged = {**headers, auth.CALLER_HEADER: headers[auth.CALLER_HEADER].replace("manager", "admin")}
    assert not auth.verify("secret", "workspaces", "PATCH", PATH, "a=1", BODY, forged)


def test_a_signature_expires():
    headers = auth.signed_headers("secret", "posts", "GET", PATH, "", None, auth.Caller())
    now = time.time()
    assert auth.verify("secret", "posts", "GET", PATH, "", b"", headers, now=now + auth.SIGNATURE_WINDOW - 2)
    assert not auth.verify("secret", "posts", "GET", PATH, "", b"", headers, now=now + auth.SIGNATURE_WINDOW + 2)
    stale = {**headers, auth.TIMESTAMP_HEADER: str(int(now) - 3600)}
    assert not auth.verify("secret", "posts", "GET", PATH, "", b"", stale), "an old timestamp with a fresh clock"
    assert not auth.verify("secret", "posts", "GET", PATH, "", b"", {**headers, auth.TIMESTAMP_HEADER: "soon"})


def test_manager_rights():
    assert auth.Caller(kind=auth.MANAGER, workspace="a").is_manager_of("a")
    assert not auth.Caller(kind=auth.MANAGER, workspace="a").is_manager_of("b")
    assert auth.Caller(kind=auth.ADMIN).is_manager_of("b")
    assert not auth.Caller(kind=auth.USER, workspace="a").is_manager_of("a")


# -- once only, and the headers that change a request's meaning -----------------------------------

COVERED = ("Idempotency-Key", "Cookie", "Authorization", CLIENT_HEADER)


def test_a_nonce_is_accepted_once():
    nonces = auth.Nonces()
    headers = auth.signed_headers("secret", "posts", "POST", PATH, "", BODY, auth.Caller())
    assert auth.verify("secret", "posts", "POST", PATH, "", BODY, headers, nonces=nonces)
    assert not auth.verify("secret", "posts", "POST", PATH, "", BODY, headers, nonces=nonces), "the same request again"
    again = auth.signed_headers("secret", "posts", "POST", PATH, "", BODY, auth.Caller())
    assert again[auth.NONCE_HEADER] != headers[auth.NONCE_HEADER]
    assert auth.verify("secret", "posts", "POST", PATH, "", BODY, again, nonces=nonces)


def test_a_forged_request_does_not_spend_the_nonce_it_copies():
    nonces = auth.Nonces()
    headers = auth.signed_headers("secret", "posts", "POST", PATH, "", BODY, auth.Caller())
    assert not auth.verify("secret", "posts", "POST", PATH, "", b"{}", headers, nonces=nonces)
    assert auth.verify("secret", "posts", "POST", PATH, "", BODY, headers, nonces=nonces)


def test_the_nonce_is_signed_and_required():
    headers = auth.signed_headers("secret", "posts", "GET", PATH, "", None, auth.Caller())
    assert not auth.verify("secret", "posts", "GET", PATH, "", b"", {**headers, auth.NONCE_HEADER: "another"})
    unsigned_nonce = {k: v for k, v in headers.items() if k != auth.NONCE_HEADER}
    assert not auth.verify("secret", "posts", "GET", PATH, "", b"", unsigned_nonce)
    timestamp = headers[auth.TIMESTAMP_HEADER]
    no_nonce = {**unsigned_nonce, auth.SIGNATURE_HEADER: auth.sign("secret", "posts", "GET", PATH, "", b"", headers[auth.CALLER_HEADER], timestamp)}
    assert not auth.verify("secret", "posts", "GET", PATH, "", b"", no_nonce), "a signature without a nonce"


@pytest.mark.parametrize("name", COVERED)
def test_a_covered_header_is_signed_with_its_value(name):
    signed = auth.signed_headers("secret", "web", "POST", PATH, "", BODY, auth.Caller(), headers={name: "value"})
    assert auth.verify("secret", "web", "POST", PATH, "", BODY, {**signed, name: "value"})
    assert auth.verify("secret", "web", "POST", PATH, "", BODY, {**signed, name.upper(): "value"}), "names are case-insensitive"
    assert not auth.verify("secret", "web", "POST", PATH, "", BODY, {**signed, name: "other"}), "changed"
    assert not auth.verify("secret", "web", "POST", PATH, "", BODY, signed), "dropped"
    bare = auth.signed_headers("secret", "web", "POST", PATH, "", BODY, auth.Caller())
    assert not auth.verify("secret", "web", "POST", PATH, "", BODY, {**bare, name: "value"}), "added"
    assert not auth.verify("secret", "web", "POST", PATH, "", BODY, {**bare, name: ""}), "an empty header is not an absent one"
    empty = auth.signed_headers("secret", "web", "POST", PATH, "", BODY, auth.Caller(), headers={name: ""})
    assert auth.verify("secret", "web", "POST", PATH, "", BODY, {**empty, name: ""})
    assert not auth.verify("secret", "web", "POST", PATH, "", BODY, empty), "absent is not empty"


def test_a_request_with_none_of_the_covered_headers_passes():
    signed = auth.signed_headers("secret", "web", "GET", PATH, "", None, auth.Caller(), headers={"Accept": "text/html"})
    absent = {name: None for name in COVERED}  # as a verifier reads them: get_header() of each
    assert auth.verify("secret", "web", "GET", PATH, "", b"", {**signed, **absent, "Accept": "text/plain"}), "other headers are free"


def forgotten() -> float:
    return REGISTRY.get_sample_value("feedback_internal_nonces_forgotten_total")


def test_nonces_expire_after_twice_the_window_and_memory_is_bounded():
    clock = [1000.0]
    nonces = auth.Nonces(maxsize=3, window=30, timer=lambda: clock[0])
    assert nonces.first_use("a") and not nonces.first_use("a")
    clock[0] += 59
    assert not nonces.first_use("a"), "still within a window of a request stamped a window ahead"
    clock[0] += 2
    assert nonces.first_use("a"), "its request has expired by now: no need to remember it"
    before = forgotten()
    for n in "bcd":
        assert nonces.first_use(n)
    assert forgotten() == before + 1, "full: the oldest nonce was forgotten early, and counted"
    assert nonces.first_use("a"), "which is what a replay past the bound gets"


# -- the kit's middleware (every Falcon service) ---------------------------------------------------


class Echo:
    def on_get(self, req, resp):
        resp.media = {"caller": req.context.caller.kind}


@pytest.fixture
def service():
    app = create_app("svc", middleware=[InternalAuth("secret", "svc", 1024)])
    app.add_route("/v1/echo", Echo())
    return falcon.testing.TestClient(app)


def test_the_kit_middleware_refuses_a_replay(service):
    headers = auth.signed_headers("secret", "svc", "GET", "/v1/echo", "", None, auth.Caller(kind=auth.ADMIN))
    assert service.simulate_get("/v1/echo", headers=headers).json == {"caller": auth.ADMIN}
    replay = service.simulate_get("/v1/echo", headers=headers)
    assert (replay.status_code, replay.json) == (401, {"error": "requests must come through the gateway", "code": "unauthorized"})


@pytest.mark.parametrize("name", COVERED)
def test_the_kit_middleware_refuses_a_changed_covered_header(service, name):
    headers = auth.signed_headers("secret", "svc", "GET", "/v1/echo", "", None, auth.Caller(), headers={name: "signed"})
    assert service.simulate_get("/v1/echo", headers={**headers, name: "changed"}).status_code == 401
    headers = auth.signed_headers("secret", "svc", "GET", "/v1/echo", "", None, auth.Caller(), headers={name: "signed"})
    assert service.simulate_get("/v1/echo", headers={**headers, name: "signed"}).status_code == 200
