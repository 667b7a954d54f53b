"""The site's rules in process: cookies, CSRF, sessions and their sealed credentials (the real
local database; no gateway)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import bson
import pytest

from common.errors import BadRequest, Forbidden
from common.public_api import CLIENT_HEADER
from web import sealing
from web.api import ApiClient
from web.contract import ANON_COOKIE, SESSION_COOKIE
from web.models import Session
from web.service import Site
from web.shapes import Page, Redirect

SECRET = "test-web-cookie-secret-" + "x" * 16


@pytest.fixture
def site(service_context, monkeypatch):
    # Outside development the site has no built-in cookie key; the in-process settings are not
    # a development platform's.
    monkeypatch.setenv("WEB_COOKIE_SECRET", SECRET)
    return service_context("web").site


def raw_sessions() -> list[bytes]:
    return [bson.encode(doc) for doc in Session._get_collection().find()]


def test_anonymous_cookie_is_signed_and_csrf_bound_to_it(site):
    first = site.visitor("acme", {})
    (name, value, max_age), = first.cookies
    assert name == ANON_COOKIE and value.startswith(first.anon_id + ".") and max_age > 0
    assert first.identity == {"X-Feedback-Anonymous-Id": first.anon_id} and first.kind == "anonymous"
    again = site.visitor("acme", {ANON_COOKIE: value}, "gateway-signed-client-token")
    assert again.anon_id == first.anon_id and again.cookies == [] and again.csrf == first.csrf
    forged = site.visitor("acme", {ANON_COOKIE: "f" * 32 + "." + value.split(".")[1]})
    assert forged.anon_id != "f" * 32 and forged.cookies  # another id, a new cookie
    site.check_csrf(again, {"csrf": first.csrf})
    for form in ({}, {"csrf": ""}, {"csrf": forged.csrf}):
        with pytest.raises(Forbidden):
            site.check_csrf(again, form)


def test_the_gateways_client_token_goes_unchanged_on_every_identity(site):
    """The site passes the gateway's signed client token back, never an address of its own saying."""
    token = "v1.203.0.113.9.1700000000.c2lnbmF0dXJl"
    anonymous = site.visitor("acme", {}, token)
    assert anonymous.identity == {"X-Feedback-Anonymous-Id": anonymous.anon_id, CLIENT_HEADER: token}
    site._start_session(anonymous, "user", "jwt-client")
    user = site.visitor("acme", {SESSION_COOKIE: anonymous.cookies[-1][1]}, token)
    assert user.identity == {"X-Feedback-User": "jwt-client", CLIENT_HEADER: token}
    site._start_session(user, "manager", "key-client")
    manager = site.visitor("acme", {SESSION_COOKIE: user.cookies[-1][1]}, token)
    assert manager.identity == {"Authorization": "Bearer key-client", CLIENT_HEADER: token}
    assert CLIENT_HEADER not in site.visitor("acme", {}).identity  # not through the gateway: nothing to pass


def test_sessions_rotate_belong_to_one_workspace_and_expire(site):
    visitor = site.visitor("acme", {})
    site._start_session(visitor, "user", "jwt-1")
    sid = visitor.cookies[-1][1]
    assert visitor.cookies[-1][0] == SESSION_COOKIE
    signed_in = site.visitor("acme", {ANON_COOKIE: visitor.cookies[0][1], SESSION_COOKIE: sid})
    assert signed_in.kind == "user" and signed_in.identity["X-Feedback-User"] == "jwt-1"
    assert signed_in.csrf != visitor.csrf and signed_in.anon_csrf == visitor.csrf
    assert site.visitor("other", {SESSION_COOKIE: sid}).kind == "anonymous"
    assert not any(sid.encode() in raw for raw in raw_sessions())  # only a digest of the cookie is stored
    site._start_session(signed_in, "manager", "key-1")
    new_sid = signed_in.cookies[-1][1]
    assert new_sid != sid and site.visitor("acme", {SESSION_COOKIE: sid}).kind == "anonymous"
    manager = site.visitor("acme", {SESSION_COOKIE: new_sid})
    assert manager.is_manager and manager.identity["Authorization"] == "Bearer key-1"
    short = replace(site.config, session_seconds=1)
    site.config, saved = short, site.config
    try:
        site._start_session(manager, "user", "jwt-2")
    finally:
        site.config = saved
    time.sleep(1.2)
    assert site.visitor("acme", {SESSION_COOKIE: manager.cookies[-1][1]}).kind == "anonymous"
    indexes = Session._get_collection().index_information()
    assert any(i.get("expireAfterSeconds") == 0 and i["key"] == [("expiresAt", 1)] for i in indexes.values())


def test_stored_sessions_hold_no_credential_and_open_only_with_the_cookie(site):
    jwt_like = "eyJhbGciOiJIUzI1NiJ9.eyJpZCI6InNlYWxlZCJ9.c2VhbGVk-" + "u" * 8
    key = "fbk_sealed_manager_grant_" + "k" * 16
    user, manager = site.visitor("acme", {}), site.visitor("acme", {})
    site._start_session(user, "user", jwt_like)
    site._start_session(manager, "manager", key, grant_id="grant-1")
    user_sid, manager_sid = user.cookies[-1][1], manager.cookies[-1][1]
    for raw in raw_sessions():
        assert jwt_like.encode() not in raw and key.encode() not in raw
        assert b"fbk_" not in raw and b"eyJ" not in raw  # nor a part of either
    stored = Session._get_collection().find_one({"grantId": "grant-1"})
    assert set(stored) >= {"sid", "kind", "workspace", "sealedCredential", "grantId"} and "credential" not in stored
    # Whoever reads the database has the digest of the id, not the id: the record stays shut.
    assert sealing.unseal(stored["sid"], stored["sealedCredential"], "manager:acme") is None
    assert sealing.unseal(manager_sid, stored["sealedCredential"], "manager:acme") == key
    assert site.visitor("acme", {SESSION_COOKIE: manager_sid}).grant_id == "grant-1"
    # A record edited in the database (a user session made a manager's) does not open either.
    Session._get_collection().update_one({"sid": hashlib.sha256(user_sid.encode()).hexdigest()}, {"$set": {"kind": "manager"}})
    assert site.visitor("acme", {SESSION_COOKIE: user_sid}).kind == "anonymous"
    # Sessions stored before sealing (a credential in clear) are deleted when the API starts.
    Session._get_collection().insert_one({"sid": "legacy", "kind": "manager", "workspace": "acme", "credential": "clear-key",
                                          "csrf": "c", "createdAt": stored["createdAt"], "expiresAt": stored["expiresAt"]})
    site.drop_unsealed_sessions()
    assert not any(b"clear-key" in raw for raw in raw_sessions())
    assert site.visitor("acme", {SESSION_COOKIE: manager_sid}).is_manager


# ---- the calls the site makes, seen from the API's side ----------------------------------

class RecordingApi(ThreadingHTTPServer):
    """A stand-in of the public API on this machine that records every request and answers as
    the API does for the calls of signing in and out (the gateway's side is tested end to end)."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.fail_delete = False
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        entry = {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
        self.server.requests.append(entry)
        return entry

    def do_GET(self):
        self._record()
        if self.path.endswith("/branding"):
            return self._answer(200, {"workspace": {"name": "Acme", "logo": None}, "theme": "light"})
        self._answer(200, {"items": []})

    def do_POST(self):
        entry = self._record()
        if entry["headers"].get("Authorization") != "Bearer pasted-manager-key":
            return self._answer(401, {"error": "invalid API key"})
        self._answer(201, {"id": "grant-7", "key": "fbk_grant_secret", "name": entry["body"]["name"],
                           "role": "manager", "expiresAt": "2030-01-01T00:00:00Z", "parentKeyId": "parent-1"})

    def do_PATCH(self):
        self._record()
        self._answer(200, {})

    def do_DELETE(self):
        self._record()
        if self.server.fail_delete:
            return self._answer(500, {"error": "internal error"})
        self._answer(200, {"id": "grant-7"})


@pytest.fixture
def recorded(site):
    api = RecordingApi()
    yield Site(ApiClient(api.url, 5), site.sessions, site.config), api
    api.shutdown()
    api.server_close()


def test_sign_in_and_out_calls_carry_the_client_token_and_exchange_the_key(recorded):
    site, api = recorded
    client = "gateway-signed-token"
    token = "eyJhbGciOiJIUzI1NiJ9.eyJpZCI6InUxIiwibmFtZSI6IlVzZXIgb25lIn0.c2ln"  # {"id": "u1", "name": "User one"}
    visitor = site.visitor("acme", {}, client)
    page = site.sso_confirm(visitor, token)
    assert isinstance(page, Page) and page.template == "sso.html" and page.context["account"]["label"] == "User one"
    assert visitor.cookies == [visitor.cookies[0]] and visitor.cookies[0][0] == ANON_COOKIE  # no session yet
    with pytest.raises(Forbidden):
        site.sso(visitor, {"token": token})
    assert isinstance(site.sso(visitor, {"token": token, "csrf": visitor.anon_csrf}), Redirect)
    cookies = {ANON_COOKIE: visitor.cookies[0][1], SESSION_COOKIE: visitor.cookies[-1][1]}
    user = site.visitor("acme", cookies, client)
    assert user.kind == "user" and user.name == "User one"

    refused = site.manager_sign_in(user, {"csrf": user.csrf, "apiKey": "not-a-manager-key"})
    assert refused.status == 400 and refused.template == "admin_sign_in.html"
    assert site.visitor("acme", cookies, client).kind == "user"  # a refused key changes nothing
    assert site.manager_sign_in(user, {"csrf": user.csrf, "apiKey": "pasted-manager-key"}).location == "/b/acme/admin/queue"
    grant = api.requests[-1]
    assert (grant["method"], grant["path"]) == ("POST", "/v1/workspaces/acme/api-keys")
    assert grant["body"] == {"name": "board session", "role": "manager", "expiresInSeconds": site.config.session_seconds}
    cookies[SESSION_COOKIE] = user.cookies[-1][1]
    manager = site.visitor("acme", cookies, client)
    assert manager.identity["Authorization"] == "Bearer fbk_grant_secret" and manager.grant_id == "grant-7"
    assert not any(b"pasted-manager-key" in raw or b"fbk_grant_secret" in raw for raw in raw_sessions())

    site.sign_out(manager, {"csrf": manager.csrf})
    delete = api.requests[-1]
    assert (delete["method"], delete["path"]) == ("DELETE", "/v1/workspaces/acme/api-keys/grant-7")
    assert delete["headers"]["Authorization"] == "Bearer fbk_grant_secret"
    assert site.visitor("acme", cookies, client).kind == "anonymous"
    for request in api.requests:
        assert request["headers"].get(CLIENT_HEADER) == client, request
        assert "X-Forwarded-For" not in request["headers"], request


def test_sign_out_survives_an_api_error_on_deleting_the_key(recorded):
    site, api = recorded
    visitor = site.visitor("acme", {})
    site.manager_sign_in(visitor, {"csrf": visitor.csrf, "apiKey": "pasted-manager-key"})
    cookies = {SESSION_COOKIE: visitor.cookies[-1][1]}
    manager = site.visitor("acme", cookies)
    api.fail_delete = True
    result = site.sign_out(manager, {"csrf": manager.csrf})
    assert isinstance(result, Redirect) and manager.cookies[-1] == (SESSION_COOKIE, None, 0)
    assert api.requests[-1]["method"] == "DELETE" and site.visitor("acme", cookies).kind == "anonymous"


def test_malformed_credentials_are_refused_before_any_call(recorded):
    site, api = recorded
    visitor = site.visitor("acme", {})
    assert site.manager_sign_in(visitor, {"csrf": visitor.csrf, "apiKey": "two\r\nlines"}).status == 400
    for token in ("", "a b", "x\r\nX-Injected: 1"):
        with pytest.raises(BadRequest):
            site.sso_confirm(visitor, token)
    assert [r["path"] for r in api.requests] == ["/v1/workspaces/acme/branding"]  # the form, shown again


def test_triage_refuses_an_unknown_action_or_state_before_any_call(recorded):
    site, api = recorded
    visitor = site.visitor("acme", {})
    site._start_session(visitor, "manager", "key-triage")
    manager = site.visitor("acme", {SESSION_COOKIE: visitor.cookies[-1][1]})
    for form in ({}, {"action": "delete"}, {"action": "moderate"}, {"action": "moderate", "moderationState": "gone"}):
        with pytest.raises(BadRequest):
            site.triage(manager, "p1", {"csrf": manager.csrf, **form})
    assert api.requests == []
    done = site.triage(manager, "p1", {"csrf": manager.csrf, "action": "moderate", "moderationState": "spam"})
    assert done == Redirect("/b/acme/p/p1")
    assert [(r["method"], r["path"], r["body"]) for r in api.requests] == [("PATCH", "/v1/workspaces/acme/posts/p1", {"moderationState": "spam"})]
    # who may comes before what: a visitor who is not a manager learns nothing of the form's rules
    anonymous = site.visitor("acme", {})
    with pytest.raises(Forbidden):
        site.triage(anonymous, "p1", {"csrf": anonymous.csrf, "action": "delete"})
