"""The site's rules in process: cookies, CSRF, and the calls of signing in and out, against a
recording stand-in of the public API (the gateway's side is tested end to end in test_pages)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from common.config import Settings
from common.errors import BadRequest, Forbidden, NotFound
from common.public_api import CLIENT_HEADER
from web.admin.moderation import DuplicatesSection
from web.admin.team import TeamSection
from web.api import ApiClient, ApiError
from web.config import load_config
from web.contract import ANON_COOKIE, OIDC_COOKIE, SESSION_COOKIE
from web.service import Site
from web.shapes import Json, Page, Redirect

SECRET = "test-web-cookie-secret-" + "x" * 16
USER = "fbs_" + "u" * 43
MANAGER = "fbs_" + "m" * 43
OTHER_BOARD = "fbs_" + "o" * 43
ENDED = "fbs_" + "e" * 43
NEW = "fbs_" + "n" * 43
ME = {
    USER: {"id": "person:1", "workspace": "acme", "role": None, "name": "Ada", "email": "ada@example.com"},
    MANAGER: {"id": "person:2", "workspace": "acme", "role": "owner", "name": "Grace", "email": "grace@example.com"},
    OTHER_BOARD: {"id": "person:3", "workspace": "other", "role": "owner", "name": "Linus", "email": "l@example.com"},
}
SESSION = {"token": NEW, "workspace": "acme", "expiresAt": "2099-01-01T00:00:00Z", "role": None,
           "user": {"id": "person:1", "name": "Ada", "email": "ada@example.com", "avatarUrl": None}}


class RecordingApi(ThreadingHTTPServer):
    """A stand-in of the public API on this machine that records every request and answers the
    calls the site makes as the API does (``answers``: (method, path) -> (status, body))."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.answers: dict[tuple[str, str], tuple[int, dict | None]] = {}
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def calls(self) -> list[tuple[str, str]]:
        return [(r["method"], r["path"]) for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self, status: int, body) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        entry = {"method": self.command, "path": urlsplit(self.path).path, "headers": dict(self.headers), "body": body}
        self.server.requests.append(entry)
        if entry["path"] == "/v1/me" and self.command == "GET":
            token = entry["headers"].get("Authorization", "").removeprefix("Bearer ")
            return self._answer(200, ME[token]) if token in ME else self._answer(401, {"error": "this session has ended"})
        if entry["path"].endswith("/branding"):
            return self._answer(200, {"workspace": {"name": "Acme", "logo": None}, "theme": "light"})
        status, answer = self.server.answers.get((self.command, entry["path"]), (200, {"items": []}))
        self._answer(status, answer)

    do_GET = do_POST = do_PATCH = do_DELETE = _handle


@pytest.fixture
def recorded():
    api = RecordingApi()
    config = load_config(Settings(dev_mode=True), {"WEB_COOKIE_SECRET": SECRET})
    yield Site(ApiClient(api.url, 5), config), api
    api.shutdown()
    api.server_close()


def test_anonymous_cookie_is_signed_and_csrf_bound_to_it(recorded):
    site, api = recorded
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
    assert api.requests == []  # nobody signed in: no call to say who


def test_the_session_cookie_is_checked_with_the_people_service(recorded):
    """One GET /v1/me says who the cookie's session is; a session that ended clears the cookie;
    a session of another board leaves the visitor anonymous here (and signed in there)."""
    site, api = recorded
    token = "v1.203.0.113.9.1700000000.c2lnbmF0dXJl"
    user = site.visitor("acme", {SESSION_COOKIE: USER}, token)
    assert user.kind == "user" and user.name == "Ada" and not user.is_manager and user.cookies[-1][0] == ANON_COOKIE
    assert user.identity == {"Authorization": f"Bearer {USER}", CLIENT_HEADER: token}
    assert api.requests[-1]["headers"][CLIENT_HEADER] == token and api.calls() == [("GET", "/v1/me")]
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    assert manager.is_manager and manager.is_owner and manager.csrf not in (user.csrf, user.anon_csrf)
    assert manager.anon_csrf == site.visitor("acme", {ANON_COOKIE: manager.cookies[0][1]}).csrf
    elsewhere = site.visitor("acme", {SESSION_COOKIE: OTHER_BOARD})
    assert elsewhere.kind == "anonymous" and (SESSION_COOKIE, None, 0) not in elsewhere.cookies
    ended = site.visitor("acme", {SESSION_COOKIE: ENDED})
    assert ended.kind == "anonymous" and (SESSION_COOKIE, None, 0) in ended.cookies
    calls = len(api.requests)
    for junk in ("x", "fbs_short", "fbs_" + "a" * 40 + "\r\nX: 1", "fbk_" + "k" * 43):
        odd = site.visitor("acme", {SESSION_COOKIE: junk})
        assert odd.kind == "anonymous" and (SESSION_COOKIE, None, 0) in odd.cookies
    assert len(api.requests) == calls  # a cookie of another form is not sent anywhere


def test_sso_trades_the_token_for_a_session_and_rotates(recorded):
    site, api = recorded
    api.answers[("POST", "/v1/workspaces/acme/sessions")] = (201, SESSION)
    client = "gateway-signed-token"
    jwt_token = "eyJhbGciOiJIUzI1NiJ9.eyJpZCI6InUxIiwibmFtZSI6IlVzZXIgb25lIn0.c2ln"  # {"id": "u1", "name": "User one"}
    visitor = site.visitor("acme", {SESSION_COOKIE: USER}, client)
    page = site.sso_confirm(visitor, jwt_token)
    assert isinstance(page, Page) and page.template == "sso.html" and page.context["account"]["label"] == "User one"
    assert not [c for c in visitor.cookies if c[0] == SESSION_COOKIE]  # no session yet
    with pytest.raises(Forbidden):
        site.sso(visitor, {"token": jwt_token, "csrf": visitor.csrf})  # the sign-in form carries anon_csrf
    assert site.sso(visitor, {"token": jwt_token, "csrf": visitor.anon_csrf}) == Redirect("/b/acme")
    trade, sign_out = api.requests[-2], api.requests[-1]
    assert (trade["method"], trade["path"]) == ("POST", "/v1/workspaces/acme/sessions")
    assert trade["headers"]["X-Feedback-User"] == jwt_token and "Authorization" not in trade["headers"]
    # the browser's previous session ends: a sign-in always gets a new token
    assert (sign_out["method"], sign_out["path"]) == ("POST", "/v1/me/sign-out")
    assert sign_out["headers"]["Authorization"] == f"Bearer {USER}"
    name, value, max_age = visitor.cookies[-1]
    assert (name, value) == (SESSION_COOKIE, NEW) and max_age > 3600
    for request in api.requests:
        assert request["headers"].get(CLIENT_HEADER) == client, request
        assert "X-Forwarded-For" not in request["headers"], request


def test_sign_out_ends_the_session_even_when_the_api_fails(recorded):
    site, api = recorded
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    with pytest.raises(Forbidden):
        site.sign_out(manager, {"csrf": manager.anon_csrf})
    assert site.sign_out(manager, {"csrf": manager.csrf}) == Redirect("/b/acme")
    assert api.requests[-1]["path"] == "/v1/me/sign-out" and manager.cookies[-1] == (SESSION_COOKIE, None, 0)
    api.answers[("POST", "/v1/me/sign-out")] = (500, {"error": "internal error"})
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    assert isinstance(site.sign_out(manager, {"csrf": manager.csrf}), Redirect)
    assert manager.cookies[-1] == (SESSION_COOKIE, None, 0)


def test_links_sign_in_only_by_post_and_go_back_only_to_this_board(recorded):
    site, api = recorded
    redeem = ("POST", "/v1/workspaces/acme/sign-in/email/redeem")
    visitor = site.visitor("acme", {})
    link = "t" * 43
    page = site.email_link(visitor, {"token": link, "next": "/b/acme/p/1"})
    assert page.template == "sign_in_email.html" and redeem not in api.calls()
    for nxt, where in (("/b/acme/p/1", "/b/acme/p/1"), ("https://evil.example", "/b/acme"), ("/b/other", "/b/acme"),
                       ("/b/acme/..//evil.example", "/b/acme"), (None, "/b/acme")):
        api.answers[redeem] = (201, {**SESSION, "next": nxt})
        assert site.email_link_redeem(visitor, {"csrf": visitor.anon_csrf, "token": link}).location == where
    assert api.requests[-1]["body"] == {"token": link}
    for nxt, where in (("/b/acme", "/b/acme"), ("https://evil.example", "/b/acme"), (None, "/b/acme")):
        api.answers[("POST", "/v1/workspaces/acme/invitations/accept")] = (201, {**SESSION, "role": "manager", "next": nxt})
        assert site.join(visitor, {"csrf": visitor.anon_csrf, "token": link}) == Redirect(where)
    with pytest.raises(Forbidden):
        site.join(visitor, {"token": link})


def test_an_oidc_callback_signs_in_only_the_browser_that_started_it(recorded):
    site, api = recorded
    api.answers[("POST", "/v1/workspaces/acme/sign-in/oidc")] = (200, {"authorizationUrl": "https://idp.example/auth?state=s1&x=1"})
    api.answers[("POST", "/v1/workspaces/acme/sign-in/oidc/callback")] = (201, {**SESSION, "next": "/b/acme/new"})
    visitor = site.visitor("acme", {}, origin="http://board.example")
    started = site.oidc_start(visitor, {"next": "/b/acme/new"})
    assert started.location.startswith("https://idp.example/auth") and visitor.cookies[-1] == (OIDC_COOKIE, "s1", 600)
    assert api.requests[-1]["body"] == {"origin": "http://board.example", "next": "/b/acme/new"}
    calls = len(api.requests)
    # a callback URL someone else started (another state, or no cookie) is refused before any call
    for cookies in ({}, {OIDC_COOKIE: "s2"}):
        other = site.visitor("acme", cookies)
        with pytest.raises(Forbidden):
            site.oidc_callback(other, {"state": "s1", "code": "c"})
        assert other.cookies[-1] == (OIDC_COOKIE, None, 0)
    assert len(api.requests) == calls
    mine = site.visitor("acme", {OIDC_COOKIE: "s1"})
    assert site.oidc_callback(mine, {"state": "s1", "code": "c"}) == Redirect("/b/acme/new")
    assert api.requests[-1]["body"] == {"state": "s1", "code": "c"} and mine.cookies[-1][:2] == (SESSION_COOKIE, NEW)
    with pytest.raises(BadRequest):
        site.oidc_callback(mine, {"error": "access_denied"})


def test_passkey_steps_answer_json_and_refuse_a_malformed_credential(recorded):
    site, api = recorded
    api.answers[("POST", "/v1/workspaces/acme/sign-in/passkey/options")] = (200, {"challengeId": "ch", "publicKey": {"challenge": "AA"}})
    api.answers[("POST", "/v1/workspaces/acme/sign-in/passkey")] = (201, SESSION)
    visitor = site.visitor("acme", {}, origin="http://board.example")
    options = site.passkey_options(visitor, {"csrf": visitor.anon_csrf})
    assert options == Json({"challengeId": "ch", "publicKey": {"challenge": "AA"}})
    for form in ({}, {"challengeId": "ch", "credential": "not json"}, {"challengeId": "ch", "credential": "[]"}):
        with pytest.raises(BadRequest):
            site.passkey_sign_in(visitor, {"csrf": visitor.anon_csrf, **form})
    done = site.passkey_sign_in(visitor, {"csrf": visitor.anon_csrf, "challengeId": "ch", "credential": '{"id": "x"}', "next": "/b/acme/p/9"})
    assert done == Json({"location": "/b/acme/p/9"}, 201) and visitor.cookies[-1][:2] == (SESSION_COOKIE, NEW)
    assert api.requests[-1]["body"] == {"challengeId": "ch", "credential": {"id": "x"}}
    api.answers[("POST", "/v1/workspaces/acme/sign-in/passkey")] = (400, {"error": "this passkey is not known here"})
    refused = site.passkey_sign_in(visitor, {"csrf": visitor.anon_csrf, "challengeId": "ch", "credential": "{}"})
    assert refused == Json({"error": "this passkey is not known here", "code": "http_400"}, 400)


def test_malformed_credentials_are_refused_before_any_call(recorded):
    site, api = recorded
    visitor = site.visitor("acme", {})
    for token in ("", "a b", "x\r\nX-Injected: 1"):
        with pytest.raises(BadRequest):
            site.sso_confirm(visitor, token)
        with pytest.raises(BadRequest):
            site.email_link(visitor, {"token": token})
        with pytest.raises(BadRequest):
            site.join(visitor, {"csrf": visitor.anon_csrf, "token": token})
    assert api.requests == []
    assert site.manager_sign_in(visitor) == Redirect("/b/acme/sign-in?next=%2Fb%2Facme%2Fadmin%2Fqueue")


def test_triage_refuses_an_unknown_action_or_state_before_any_call(recorded):
    site, api = recorded
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    api.requests.clear()
    for form in ({}, {"action": "delete"}, {"action": "moderate"}, {"action": "moderate", "moderationState": "gone"}):
        with pytest.raises(BadRequest):
            site.triage(manager, "p1", {"csrf": manager.csrf, **form})
    assert api.requests == []
    done = site.triage(manager, "p1", {"csrf": manager.csrf, "action": "moderate", "moderationState": "spam"})
    assert done == Redirect("/b/acme/p/p1")
    assert [(r["method"], r["path"], r["body"]) for r in api.requests] == [("PATCH", "/v1/workspaces/acme/posts/p1", {"moderationState": "spam"})]
    # who may comes before what: a visitor who is not a manager learns nothing of the form's rules
    for visitor in (site.visitor("acme", {}), site.visitor("acme", {SESSION_COOKIE: USER})):
        with pytest.raises(Forbidden):
            site.triage(visitor, "p1", {"csrf": visitor.csrf, "action": "delete"})
        with pytest.raises(Forbidden):
            TeamSection(site).member(visitor, "p1", {"csrf": visitor.csrf, "action": "remove"})


def test_unsubscribing_asks_no_form_token_and_calls_as_nobody(recorded):
    """A mail's link: opening it calls nothing that unsubscribes; its POST (the page's button, or
    a mail provider's one-click POST without cookies) carries no CSRF token and is made as nobody,
    even for a signed-in visitor: the signed token says who. A token of another form is refused
    before any call; one the API refuses is a 400 page."""
    site, api = recorded
    visitor = site.visitor("acme", {SESSION_COOKIE: USER})
    unsubscribe = ("POST", "/v1/workspaces/acme/notifications/unsubscribe")
    token = "eyJhY21lIl0.signed-token_1"
    page = site.unsubscribe_page(visitor, {"token": token})
    assert page.status == 200 and page.context["token"] == token and unsubscribe not in api.calls()
    api.answers[unsubscribe] = (200, {"workspace": "acme", "unsubscribed": True})
    done = site.unsubscribe(visitor, {"token": token})
    assert done.template == "unsubscribed.html" and done.status == 200
    sent = [r for r in api.requests if (r["method"], r["path"]) == unsubscribe]
    assert len(sent) == 1 and sent[0]["body"] == {"token": token} and "Authorization" not in sent[0]["headers"]
    assert sent[0]["headers"]["X-Feedback-Anonymous-Id"] == visitor.anon_id
    for bad in ("", "short", "has spaces in it", "x" * 1001):
        assert site.unsubscribe(visitor, {"token": bad}).status == 400
        assert site.unsubscribe_page(visitor, {"token": bad}).status == 400
    assert len([r for r in api.requests if (r["method"], r["path"]) == unsubscribe]) == 1
    api.answers[unsubscribe] = (400, {"error": "this unsubscribe link is not valid for this workspace"})
    refused = site.unsubscribe(visitor, {"token": token})
    assert refused.status == 400 and "not valid for this board" in refused.context["error"]


def test_the_preferences_form_sends_every_choice(recorded):
    """An unticked box is not in a form: the site sends it as off. Unsubscribing sends only that."""
    site, api = recorded
    visitor = site.visitor("acme", {SESSION_COOKIE: USER})
    saved = site.notifications_update(visitor, {"csrf": visitor.csrf, "action": "save", "replies": "1"})
    assert isinstance(saved, Redirect) and saved.location == "/b/acme/account/notifications?saved=1"
    site.notifications_update(visitor, {"csrf": visitor.csrf, "action": "unsubscribe", "replies": "1"})
    patches = [r["body"] for r in api.requests if r["method"] == "PATCH"]
    assert patches == [{"statusChanges": False, "replies": True, "merges": False, "changelog": False, "autoFollow": False},
                       {"unsubscribed": True}]
    with pytest.raises(Forbidden):
        site.notifications_update(visitor, {"action": "unsubscribe"})
    with pytest.raises(BadRequest):
        site.notifications_update(visitor, {"csrf": visitor.csrf, "action": "mute"})
    assert len([r for r in api.requests if r["method"] == "PATCH"]) == 2


TRIAGE_SETTINGS = {
    "tags": [{"slug": "bug", "name": "Bug", "color": "#dc2626"}, {"slug": "ux", "name": "UX", "color": "#2563eb"}],
    "fields": [
        {"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3, "public": False},
        {"key": "effort", "name": "Effort", "type": "number", "public": False},
        {"key": "platform", "name": "Platform", "type": "multiselect", "options": ["ios", "android", "web"], "public": True},
        {"key": "segment", "name": "Segment", "type": "select", "options": ["smb", "enterprise"], "public": False},
        {"key": "renewal", "name": "Renewal risk", "type": "checkbox", "public": False},
        {"key": "due", "name": "Due", "type": "date", "public": False},
        {"key": "note", "name": "Note", "type": "text", "public": True},
        {"key": "added", "name": "Added meanwhile", "type": "text", "public": False},
    ],
    "scoreFormula": "votes * impact", "version": 3,
}


def test_the_triage_form_becomes_one_patch_and_empty_inputs_clear(recorded):
    """Owner, ETA, tags and every field the form showed, in one PATCH: typed as JSON, an empty
    input null, an unticked box off; the owner only when changed; a field the form did not show
    (added meanwhile) is not sent."""
    site, api = recorded
    api.answers[("GET", "/v1/workspaces/acme/triage")] = (200, TRIAGE_SETTINGS)
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    shown = "impact,effort,platform,segment,renewal,due,note"
    form = {"csrf": manager.csrf, "action": "fields", "owner": "person:7", "ownerWas": "", "eta": "2027-03",
            "tag.ux": "1", "tag.nope": "1", "fieldKeys": shown + ",Bad Key", "field.impact": "3", "field.effort": "2.5",
            "field.platform.2": "web", "field.platform.0": "ios", "field.platform.9": "symbian", "field.segment": "enterprise",
            "field.renewal": "true", "field.due": "2027-01-31", "field.note": "  from a call  ", "field.added": "x"}
    assert site.triage(manager, "p1", form) == Redirect("/b/acme/p/p1")
    patch = api.requests[-1]
    assert (patch["method"], patch["path"]) == ("PATCH", "/v1/workspaces/acme/posts/p1")
    assert patch["body"] == {"owner": "person:7", "eta": "2027-03", "tags": ["ux"], "fields": {
        "impact": 3, "effort": 2.5, "platform": ["ios", "web"], "segment": "enterprise", "renewal": True,
        "due": "2027-01-31", "note": "from a call"}}
    # Everything emptied: nulls, no tags, the checkbox off; the owner unchanged is not sent.
    site.triage(manager, "p1", {"csrf": manager.csrf, "action": "fields", "owner": "person:7", "ownerWas": "person:7",
                                "eta": "", "fieldKeys": shown, "field.impact": "", "field.segment": "", "field.due": ""})
    assert api.requests[-1]["body"] == {"eta": None, "tags": [], "fields": {
        "impact": None, "effort": None, "platform": None, "segment": None, "renewal": False, "due": None, "note": None}}
    # "Nobody" clears the owner; a number that is not one goes as typed, for the API to name.
    site.triage(manager, "p1", {"csrf": manager.csrf, "action": "fields", "owner": "", "ownerWas": "person:7",
                                "fieldKeys": "impact,effort", "field.impact": "lots", "field.effort": "1e999"})
    assert api.requests[-1]["body"] == {"owner": None, "eta": None, "tags": [], "fields": {"impact": "lots", "effort": "1e999"}}
    # The panel's status and moderation go only when changed: a save of tags alone tells no follower.
    site.triage(manager, "p1", {"csrf": manager.csrf, "action": "fields", "statusSlug": "open", "statusWas": "open",
                                "moderationState": "approved", "moderationStateWas": "approved"})
    assert api.requests[-1]["body"] == {"eta": None, "tags": []}
    site.triage(manager, "p1", {"csrf": manager.csrf, "action": "fields", "statusSlug": "planned", "statusWas": "open",
                                "moderationState": "spam", "moderationStateWas": "approved"})
    assert api.requests[-1]["body"] == {"statusSlug": "planned", "moderationState": "spam", "eta": None, "tags": []}
    # The API's refusal reaches the page as ApiError (the error page), never a failure of the site's.
    api.answers[("PATCH", "/v1/workspaces/acme/posts/p1")] = (400, {"error": "field 'fields.impact': must be a number"})
    with pytest.raises(ApiError) as refused:
        site.triage(manager, "p1", {"csrf": manager.csrf, "action": "fields", "fieldKeys": "impact", "field.impact": "lots"})
    assert refused.value.status == 400 and "fields.impact" in refused.value.message


def test_the_board_adds_score_and_tags_for_the_team_only(recorded):
    site, api = recorded
    api.answers[("GET", "/v1/workspaces/acme/triage")] = (200, TRIAGE_SETTINGS)
    api.answers[("GET", "/v1/workspaces/acme/boards")] = (200, {"items": [BOARD]})
    visitor = site.visitor("acme", {})
    page = site.board(visitor, {"sort": "score", "tag": "bug"})
    listed = api.requests[-1]
    assert listed["path"] == "/v1/workspaces/acme/posts" and ("GET", "/v1/workspaces/acme/triage") not in api.calls()
    assert page.context["sorts"] == ["top", "trending", "new"] and page.context["state"]["sort"] == "top" and page.context["state"]["tag"] == ""
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    page = site.board(manager, {"sort": "score", "tag": "bug"})
    assert page.context["sorts"] == ["top", "trending", "new", "score"] and page.context["state"] == {
        "board": "", "status": "", "q": "", "sort": "score", "tag": "bug"}
    assert page.context["here"] == "/b/acme?sort=score&tag=bug"
    assert site.board(manager, {"tag": "nope"}).context["state"]["tag"] == ""  # an unknown tag shows every post


BOARD = {"id": "b" * 24, "slug": "features", "name": "Feature requests"}


def test_a_workspace_without_a_board_lists_nothing_and_offers_the_team_its_first(recorded):
    """No board: the board and submit pages ask for no post, status or tag (there is none to
    show), and say which page the first board's form is on."""
    site, api = recorded
    for visitor in (site.visitor("acme", {}), site.visitor("acme", {SESSION_COOKIE: MANAGER})):
        before = len(api.requests)
        page = site.board(visitor, {})
        assert page.template == "board.html" and page.context["boards"] == [] and page.context["first_board"]["then"] == "board"
        asked = [path for _, path in api.calls()[before:]]
        assert asked[-1] == "/v1/workspaces/acme/boards" and not any(p.endswith(("/posts", "/statuses", "/triage")) for p in asked)
        page = site.new_post_form(visitor, {})
        assert page.template == "new.html" and page.context["boards"] == [] and page.context["first_board"]["then"] == "new"


def test_the_first_board_is_created_by_a_team_member_with_the_form_token(recorded):
    site, api = recorded
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    user = site.visitor("acme", {SESSION_COOKIE: USER})
    calls = len(api.requests)
    with pytest.raises(Forbidden):
        site.create_board(manager, {"csrf": user.csrf, "name": "Ideas"})
    with pytest.raises(Forbidden):
        site.create_board(user, {"csrf": user.csrf, "name": "Ideas"})
    with pytest.raises(BadRequest):
        site.create_board(manager, {"csrf": manager.csrf, "name": "Ideas", "then": "elsewhere"})
    assert len(api.requests) == calls
    # The slug is made from the name when none is typed; the page it came from is where it lands.
    api.answers[("POST", "/v1/workspaces/acme/boards")] = (201, {"id": "c" * 24, "slug": "cafe-creme", "name": "Café & Crème"})
    done = site.create_board(manager, {"csrf": manager.csrf, "name": " Café & Crème ", "slug": "", "then": "board"})
    assert done == Redirect("/b/acme?created=cafe-creme")
    assert api.requests[-1]["body"] == {"slug": "cafe-creme", "name": "Café & Crème"}
    done = site.create_board(manager, {"csrf": manager.csrf, "name": "Ideas", "slug": "cafe-creme", "then": "new"})
    assert done == Redirect("/b/acme/new?board=cafe-creme&created=cafe-creme")
    assert api.requests[-1]["body"] == {"slug": "cafe-creme", "name": "Ideas"}
    # A refusal is the page again, the form as typed, the field it is about marked.
    api.answers[("POST", "/v1/workspaces/acme/boards")] = (400, {"error": "field 'name' must be at most 100 characters"})
    page = site.create_board(manager, {"csrf": manager.csrf, "name": "x" * 101, "then": "new"})
    assert page.template == "new.html" and page.status == 400
    assert page.context["first_board"] == {"then": "new", "name": "x" * 101, "slug": "",
                                           "error": "field 'name' must be at most 100 characters", "invalid": "name"}
    api.answers[("POST", "/v1/workspaces/acme/boards")] = (409, {"error": "board 'ideas' already exists"})
    page = site.create_board(manager, {"csrf": manager.csrf, "name": "Ideas"})
    assert page.template == "board.html" and page.status == 409 and page.context["first_board"]["invalid"] == "slug"
    # A name with nothing to make a slug of is the site's to say, before any call.
    calls = len(api.requests)
    for name, field in (("", "name"), ("日本語", "slug")):
        page = site.create_board(manager, {"csrf": manager.csrf, "name": name, "slug": " "})
        assert page.status == 400 and page.context["first_board"]["invalid"] == field and page.context["first_board"]["error"]
    assert not [c for c in api.calls()[calls:] if c[0] == "POST"]


def test_a_suggestion_is_decided_by_a_manager_with_the_form_token(recorded):
    site, api = recorded
    duplicates = DuplicatesSection(site)
    manager = site.visitor("acme", {SESSION_COOKIE: MANAGER})
    user = site.visitor("acme", {SESSION_COOKIE: USER})
    assert duplicates.show(user, {}).location == "/b/acme/sign-in?next=%2Fb%2Facme%2Fadmin%2Fduplicates"
    calls = len(api.requests)
    with pytest.raises(Forbidden):
        duplicates.decide(user, "a" * 24, {"csrf": user.csrf, "action": "accept"})
    with pytest.raises(Forbidden):
        duplicates.decide(manager, "a" * 24, {"csrf": user.csrf, "action": "accept"})
    with pytest.raises(BadRequest):
        duplicates.decide(manager, "a" * 24, {"csrf": manager.csrf, "action": "merge"})
    with pytest.raises(NotFound):
        duplicates.decide(manager, "..", {"csrf": manager.csrf, "action": "accept"})
    assert len(api.requests) == calls
    assert duplicates.decide(manager, "a" * 24, {"csrf": manager.csrf, "action": "dismiss"}) == Redirect(
        "/b/acme/admin/duplicates?done=dismiss")
    assert api.calls()[-1] == ("POST", f"/v1/workspaces/acme/suggestions/{'a' * 24}/dismiss")
    api.answers[("POST", f"/v1/workspaces/acme/suggestions/{'b' * 24}/accept")] = (409, {"error": "suggestion is dismissed already"})
    page = duplicates.decide(manager, "b" * 24, {"csrf": manager.csrf, "action": "accept"})
    assert page.template == "admin/duplicates.html" and page.status == 409 and page.context["error"] == "suggestion is dismissed already"
    assert ("GET", "/v1/workspaces/acme/suggestions") in api.calls()[-2:]  # the list as it is now
