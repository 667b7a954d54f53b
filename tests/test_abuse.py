"""Concurrent and hostile clients, through the gateway with the real local servers: first
writes after provisioning, forged identities, idempotent retries, replayed
internal signatures, ids in two spellings, hidden posts behind merges, and default secrets.
docs/reliability.md ("Bad input and abuse") lists what each tries and what the platform answers.
Rate limits and budgets: tests/test_budgets.py."""

from __future__ import annotations

import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from common import auth
from devstack import _bin
from testkit import assert_error, create_workspace, unique_slug


@pytest.fixture
def features_board(workspace) -> dict:
    """A board ``features`` in the ``workspace`` fixture's workspace (the Board it answered)."""
    return workspace.board("features", "Features")


def new_post(ws, title="A post", **kw):
    kw = kw or {"key": ws.key}
    r = ws.api.post(f"{ws.path}/posts", json={"boardSlug": "features", "title": title, "content": "x"}, **kw)
    assert r.status_code == 201, r.text
    return r.json()


# -- consistency under concurrency ------------------------------------------------------------


def test_first_writes_after_provisioning_all_succeed(api, admin_token):
    """A workspace and board created a moment ago, then eight posts at once: the posts
    service has not heard of either yet, and every post must still be written."""
    for _ in range(3):
        ws = create_workspace(api, admin_token)
        ws.board("features", "Features")
        body = {"boardSlug": "features", "title": "Imported", "content": "x"}
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: api.post(f"{ws.path}/posts", key=ws.key, json=body), range(8)))
        assert [r.status_code for r in answers] == [201] * 8, [r.text for r in answers if r.status_code != 201]
        assert len(api.get(f"{ws.path}/posts", key=ws.key).json()["items"]) == 8


@pytest.mark.usefixtures("features_board")
def test_a_board_created_a_moment_ago_is_honoured_at_once(workspace):
    for i in range(5):
        slug = f"area-{i}"
        workspace.board(slug, f"Area {i}")
        r = workspace.api.post(f"{workspace.path}/posts", key=workspace.key, json={"boardSlug": slug, "title": "t", "content": "x"})
        assert r.status_code == 201, r.text


@pytest.mark.usefixtures("features_board")
def test_ids_have_one_spelling(workspace):
    """A vote cast through an upper-case id is the same vote as through the lower-case one,
    and a merge moves it like any other."""
    a, b = new_post(workspace, "A")["id"], new_post(workspace, "B")["id"]
    user = workspace.user_token("upper-case-voter")
    r = workspace.api.post(f"{workspace.path}/posts/{a.upper()}/vote", user=user)
    assert r.status_code == 201 and r.json()["id"] == a, r.text
    assert workspace.api.get(f"{workspace.path}/posts/{a}", user=user).json()["voted"] is True
    assert workspace.api.post(f"{workspace.path}/posts/{a}/vote", user=user).status_code == 200, "the same vote"
    r = workspace.api.post(f"{workspace.path}/posts/{a.upper()}/merge", key=workspace.key, json={"intoPostId": b.upper()})
    assert r.status_code == 200, r.text
    merged_into = workspace.api.get(f"{workspace.path}/posts/{b}", user=user).json()
    assert merged_into["voteCount"] == 1 and merged_into["voted"] is True
    assert workspace.api.post(f"{workspace.path}/posts/{a.upper()}/unmerge", key=workspace.key).status_code == 200
    restored = workspace.api.get(f"{workspace.path}/posts/{a}", user=user).json()
    assert (restored["voteCount"], restored["voted"]) == (1, True), "the unmerge moved the vote back"


# -- leaks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("hidden_state", ["pending", "spam", "rejected"])
@pytest.mark.usefixtures("features_board")
def test_hidden_posts_do_not_leak_through_merges(workspace, hidden_state):
    secret_title = f"Hidden {uuid.uuid4().hex[:6]}"
    hidden = new_post(workspace, secret_title)["id"]
    workspace.api.patch(f"{workspace.path}/posts/{hidden}", key=workspace.key, json={"moderationState": hidden_state})
    shown = new_post(workspace, "Approved")["id"]
    assert workspace.api.post(f"{workspace.path}/posts/{hidden}/merge", key=workspace.key, json={"intoPostId": shown}).status_code == 200
    for who in ({}, {"user": workspace.user_token("reader")}):
        r = workspace.api.get(f"{workspace.path}/posts/{shown}", **who)
        assert r.json()["mergedPosts"] == [] and secret_title not in r.text
        listing = workspace.api.get(f"{workspace.path}/posts", **who).text
        assert secret_title not in listing
    assert [m["title"] for m in workspace.api.get(f"{workspace.path}/posts/{shown}", key=workspace.key).json()["mergedPosts"]] == [secret_title]
    # Approving the post shows it; hiding the canonical post hides the link the other way too.
    workspace.api.patch(f"{workspace.path}/posts/{hidden}", key=workspace.key, json={"moderationState": "approved"})
    assert [m["id"] for m in workspace.api.get(f"{workspace.path}/posts/{shown}").json()["mergedPosts"]] == [hidden]
    workspace.api.patch(f"{workspace.path}/posts/{shown}", key=workspace.key, json={"moderationState": hidden_state})
    assert workspace.api.get(f"{workspace.path}/posts/{hidden}").json()["mergedInto"] is None


# -- identities -------------------------------------------------------------------------------


def test_anonymous_ids_cannot_claim_an_address_identity(api, admin_token):
    ws = create_workspace(api, admin_token)
    ws.settings(anonVote=True)
    ws.board("features", "Features")
    post = new_post(ws)
    ua = {"User-Agent": "probe-agent/1.0"}
    assert api.post(f"{ws.path}/posts/{post['id']}/vote", headers=ua).status_code == 201  # identified by address + agent
    forged = {**ua, "X-Feedback-Anonymous-Id": "127.0.0.1|probe-agent/1.0"}
    assert_error(api.get(f"{ws.path}/posts/{post['id']}", headers=forged), 400)
    guessable = {"X-Feedback-Anonymous-Id": "bob"}
    assert_error(api.post(f"{ws.path}/posts/{post['id']}/vote", headers=guessable), 400)
    own = {**ua, "X-Feedback-Anonymous-Id": uuid.uuid4().hex}
    assert api.get(f"{ws.path}/posts/{post['id']}", headers=own).json()["voted"] is False


def test_forwarded_for_from_an_untrusted_peer_changes_nothing(api, admin_token):
    ws = create_workspace(api, admin_token)
    ws.settings(anonVote=True)
    ws.board("features", "Features")
    post = new_post(ws)
    assert api.post(f"{ws.path}/posts/{post['id']}/vote", headers={"X-Forwarded-For": "203.0.113.1"}).status_code == 201
    again = api.post(f"{ws.path}/posts/{post['id']}/vote", headers={"X-Forwarded-For": "203.0.113.2"})
    assert again.status_code == 200, "the same visitor: the peer is not a trusted proxy"


# -- idempotency ------------------------------------------------------------------------------


@pytest.mark.usefixtures("features_board")
def test_a_retried_create_with_its_key_creates_once(workspace):
    key = {"Idempotency-Key": uuid.uuid4().hex}
    body = {"boardSlug": "features", "title": "Once", "content": "x"}
    first = workspace.api.post(f"{workspace.path}/posts", key=workspace.key, headers=key, json=body)
    again = workspace.api.post(f"{workspace.path}/posts", key=workspace.key, headers=key, json=body)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers.get("Idempotent-Replayed") == "true"
    assert [p["title"] for p in workspace.api.get(f"{workspace.path}/posts", key=workspace.key).json()["items"]] == ["Once"]
    assert_error(workspace.api.post(f"{workspace.path}/posts", key=workspace.key, headers=key, json={**body, "title": "Other"}), 422)
    other_caller = workspace.api.post(f"{workspace.path}/posts", user=workspace.user_token("someone"), headers=key, json=body)
    assert other_caller.status_code == 201 and other_caller.json()["id"] != first.json()["id"], "keys are per caller"
    assert_error(workspace.api.post(f"{workspace.path}/posts", key=workspace.key, headers={"Idempotency-Key": "has space"}, json=body), 400)


@pytest.mark.usefixtures("features_board")
def test_idempotent_comments_votes_keys_and_workspaces(api, admin_token, workspace):
    """A retry answers the first answer again, except where that answer held a secret shown only
    once (a new API key): then it says the request succeeded, and nothing is created twice."""
    post = new_post(workspace)
    slug = unique_slug()
    for path, body, kw, shown_once in (
        (f"{workspace.path}/posts/{post['id']}/comments", {"content": "Hello"}, {"key": workspace.key}, False),
        (f"{workspace.path}/posts/{post['id']}/vote", None, {"user": workspace.user_token("voter")}, False),
        (f"{workspace.path}/api-keys", {"name": "ci"}, {"key": workspace.key}, True),
        ("/workspaces", {"slug": slug, "name": "Once"}, {"key": admin_token}, True),
    ):
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        first = api.post(path, headers=headers, json=body, **kw)
        again = api.post(path, headers=headers, json=body, **kw)
        assert first.status_code == 201, first.text
        if shown_once:
            assert "succeeded" in assert_error(again, 409), path
        else:
            assert (again.status_code, again.json()) == (201, first.json()), path
    comments = api.get(f"{workspace.path}/posts/{post['id']}/comments", key=workspace.key).json()["items"]
    assert len(comments) == 1
    assert api.get(f"{workspace.path}/posts/{post['id']}", key=workspace.key).json()["voteCount"] == 1
    assert [k["name"] for k in api.get(f"{workspace.path}/api-keys", key=workspace.key).json()["items"]].count("ci") == 1
    assert api.get(f"/workspaces/{slug}", key=admin_token).status_code == 200


# -- trust between processes ----------------------------------------------------------------------


def test_internal_signatures_cannot_be_replayed(stack, workspace):
    path = f"/v1/workspaces/{workspace.slug}/settings"
    manager = auth.Caller(kind=auth.MANAGER, workspace=workspace.slug, key_id="k")
    body = b'{"primaryColor": "#123456"}'
    signed = auth.signed_headers(stack.internal_secret, "workspaces", "PATCH", path, "", body, manager)
    headers = {**signed, "Content-Type": "application/json"}
    url = stack.service_url("workspaces") + path
    assert_error(requests.patch(url, data=b'{"primaryColor": "#000000"}', headers=headers, timeout=5), 401)  # another body
    assert_error(requests.patch(url + "?x=1", data=body, headers=headers, timeout=5), 401)  # another query
    assert_error(requests.patch(stack.service_url("posts") + path, data=body, headers=headers, timeout=5), 401)  # another service
    stale = {**auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, manager)}
    stale[auth.TIMESTAMP_HEADER] = str(int(time.time()) - 3600)
    assert_error(requests.get(url, headers=stale, timeout=5), 401)
    assert requests.patch(url, data=body, headers=headers, timeout=5).status_code == 200  # the request it was made for


STRONG = "x" * 32


@pytest.mark.parametrize("command, env, refusal", [
    (["feedback", "serve", "posts", "--bind", "127.0.0.1:1"], {}, "INTERNAL_SECRET is unset"),
    (["feedback-gateway", "--bind", "127.0.0.1:1"], {}, "FEEDBACK_ADMIN_TOKEN and INTERNAL_SECRET are unset"),
    (["feedback-gateway", "--bind", "127.0.0.1:1"], {"FEEDBACK_ADMIN_TOKEN": STRONG, "INTERNAL_SECRET": STRONG}, "GATEWAY_SECRET is unset"),
    (["feedback-gateway", "--bind", "127.0.0.1:1"], {"FEEDBACK_ADMIN_TOKEN": STRONG, "INTERNAL_SECRET": STRONG, "GATEWAY_SECRET": "short"},
     "GATEWAY_SECRET is shorter than 32 characters"),
])
def test_default_secrets_are_refused_outside_development(command, env, refusal):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **env}
    done = subprocess.run([_bin(command[0]), *command[1:]], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert refusal in done.stderr + done.stdout


# -- end-user tokens ------------------------------------------------------------------------------


def test_sso_tokens_must_expire_soon_and_name_their_workspace(api, workspace, other_workspace):
    import jwt

    workspace.user_token()  # sets the workspace's ssoSecret
    secret, now = workspace.sso_secret, int(time.time())

    def as_user(**claims):
        token = jwt.encode({"id": "u-1", **claims}, secret, algorithm="HS256")
        return api.get(f"{workspace.path}/posts", user=token)

    assert "exp" in assert_error(as_user(aud=workspace.slug), 401), "a token without exp never expired before"
    assert_error(as_user(exp=now + 2 * 86400, aud=workspace.slug), 401)  # past the 24 h maximum lifetime
    assert as_user(exp=now + 3600, aud=workspace.slug).status_code == 200
    # A secret set now: its tokens must name the workspace (services/workspaces tests: older secrets).
    assert_error(as_user(exp=now + 3600), 401)
    assert "audience" in assert_error(as_user(exp=now + 3600, aud=other_workspace.slug), 401)
