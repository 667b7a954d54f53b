"""Signing in with a workspace's OpenID Connect provider, against a real provider on loopback
(oidc-provider-mock): configuration, the whole sign-in, and every refusal of a hostile answer.

The provider's authorization form is posted to directly (as a browser would after the person
chose who to be); its redirect's Location carries the code back, as the board's callback page
would receive it.
"""

from __future__ import annotations

import time
import uuid
from urllib.parse import parse_qs, urlsplit

import oidc_provider_mock
import pytest
import requests
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import RSAKey
from pymongo import MongoClient

from people.oidc import TokenRefused, verify_id_token
from testkit.api import assert_error

from .helpers import join

CLIENT_ID = "feedback-board"


@pytest.fixture(scope="module")
def provider() -> str:
    """The issuer URL of a real OpenID Connect provider running in this process."""
    with oidc_provider_mock.run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture
def people_db(stack):
    return MongoClient(stack.mongodb_uri)["feedback_people"]


def configure(workspace, provider: str, **fields) -> dict:
    body = {"issuer": provider, "clientId": CLIENT_ID, "clientSecret": "s3cret-" + uuid.uuid4().hex, **fields}
    r = workspace.api.put(f"{workspace.path}/oidc", key=workspace.key, json=body)
    assert r.status_code == 200, r.text
    return r.json()


def offer_to_end_users(workspace) -> None:
    r = workspace.api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key,
                            json={"endUserMethods": ["email", "oidc"]})
    assert r.status_code == 200, r.text


def authorize(workspace, email: str, provider: str, **start) -> dict:
    """Begin signing in, and be ``email`` at the provider: the query the callback page gets."""
    r = workspace.api.post(f"{workspace.path}/sign-in/oidc", json=start)
    assert r.status_code == 200, r.text
    url = r.json()["authorizationUrl"]
    requests.put(f"{provider}/users/{email}", json={"email": email, "email_verified": True, "name": "Ada Lovelace"}, timeout=10).raise_for_status()
    answer = requests.post(url, data={"sub": email}, allow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text
    location = answer.headers["Location"]
    return {"url": url, "location": location, **{k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}}


def callback(workspace, state: str, code: str):
    return workspace.api.post(f"{workspace.path}/sign-in/oidc/callback", json={"state": state, "code": code})




def email_of(domain: str = "example.com") -> str:
    return f"ada-{uuid.uuid4().hex[:8]}@{domain}"


# -- configuration ------------------------------------------------------------------------------


def test_an_owner_configures_the_provider_and_its_secret_is_sealed(workspace, provider, people_db):
    api, path = workspace.api, workspace.path
    assert api.get(f"{path}/oidc", key=workspace.key).json() == {
        "configured": False, "issuer": None, "clientId": None, "hasClientSecret": False, "name": None,
        "teamEmailDomain": None, "updatedAt": None,
    }
    assert api.get(f"{path}/sign-in-settings").json()["oidc"] is None

    shown = configure(workspace, provider + "/", name="Acme SSO", clientSecret="the-client-secret",
                      teamEmailDomain="Example.com")
    assert {k: shown[k] for k in ("configured", "issuer", "clientId", "hasClientSecret", "name", "teamEmailDomain")} == {
        "configured": True, "issuer": provider, "clientId": CLIENT_ID, "hasClientSecret": True, "name": "Acme SSO",
        "teamEmailDomain": "example.com",
    }
    assert "the-client-secret" not in api.get(f"{path}/oidc", key=workspace.key).text
    stored = people_db["oidc_providers"].find_one({"_id": workspace.slug})
    assert stored["clientSecret"].startswith("sealed:v1:") and "the-client-secret" not in stored["clientSecret"]
    assert api.get(f"{path}/sign-in-settings").json()["oidc"] == {"name": "Acme SSO"}

    # A change without a secret keeps the stored one.
    r = api.put(f"{path}/oidc", key=workspace.key, json={"issuer": provider, "clientId": "other"})
    assert r.status_code == 200 and r.json()["hasClientSecret"] is True and r.json()["name"] == "Single sign-on"
    assert people_db["oidc_providers"].find_one({"_id": workspace.slug})["clientSecret"] == stored["clientSecret"]

    audit = api.get(f"{path}/audit-log", key=workspace.key).json()["items"]
    assert [e["data"]["clientId"] for e in audit if e["type"] == "oidc.changed"] == ["other", CLIENT_ID]

    assert api.delete(f"{path}/oidc", key=workspace.key).status_code == 204
    assert api.get(f"{path}/sign-in-settings").json()["oidc"] is None
    assert api.get(f"{path}/oidc", key=workspace.key).json()["configured"] is False
    assert_error(api.post(f"{path}/sign-in/oidc", json={}), 400)


def test_an_issuer_without_discovery_is_refused(workspace, provider):
    api, path = workspace.api, workspace.path
    for issuer in (provider + "/nothing-here", "http://127.0.0.1:9/", "ftp://example.com"):
        assert_error(api.put(f"{path}/oidc", key=workspace.key, json={"issuer": issuer, "clientId": CLIENT_ID}), 400)
    assert api.get(f"{path}/oidc", key=workspace.key).json()["configured"] is False


def test_only_owners_configure_and_only_managers_read(workspace, provider):
    api, path = workspace.api, workspace.path
    configure(workspace, provider)
    offer_to_end_users(workspace)
    query = authorize(workspace, email_of(), provider)
    end_user = callback(workspace, query["state"], query["code"]).json()["token"]
    assert_error(api.get(f"{path}/oidc", key=end_user), 403)
    assert_error(api.put(f"{path}/oidc", key=end_user, json={"issuer": provider, "clientId": "x"}), 403)
    assert_error(api.delete(f"{path}/oidc", key=end_user), 403)
    assert_error(api.get(f"{path}/oidc"), 401)


# -- signing in ---------------------------------------------------------------------------------


def test_an_end_user_signs_in_end_to_end(workspace, provider, stack, people_db):
    configure(workspace, provider)
    offer_to_end_users(workspace)
    email = email_of()
    query = authorize(workspace, email, provider, next=f"/b/{workspace.slug}/features")

    sent = parse_qs(urlsplit(query["url"]).query)
    redirect_uri = f"{stack.url.rstrip('/')}/b/{workspace.slug}/sign-in/oidc/callback"
    assert sent["redirect_uri"] == [redirect_uri] and sent["client_id"] == [CLIENT_ID]
    assert sent["code_challenge_method"] == ["S256"] and sent["code_challenge"][0] and sent["nonce"][0]
    assert "openid" in sent["scope"][0].split() and "email" in sent["scope"][0].split()
    assert query["location"].startswith(redirect_uri + "?")
    # PKCE: the challenge sent is of the verifier kept here (the provider's mock does not check it).
    kept = people_db["oidc_states"].find_one({"_id": query["state"]})
    assert create_s256_code_challenge(kept["codeVerifier"]) == sent["code_challenge"][0]
    assert kept["nonce"] == sent["nonce"][0] and kept["workspace"] == workspace.slug

    r = callback(workspace, query["state"], query["code"])
    assert r.status_code == 201, r.text
    session = r.json()
    assert session["role"] is None and session["next"] == f"/b/{workspace.slug}/features"
    assert session["user"]["email"] == email and session["user"]["name"] == "Ada Lovelace"

    me = workspace.api.get("/me", key=session["token"]).json()
    assert me["email"] == email and me["role"] is None and me["id"].startswith("person:")
    audit = workspace.api.get(f"{workspace.path}/audit-log", key=workspace.key).json()["items"]
    assert any(e["type"] == "sign_in" and e["data"]["method"] == "oidc" for e in audit)
    # They vote and comment as themselves.
    workspace.board("features", "Feature requests")
    post = workspace.api.post(f"{workspace.path}/posts", key=workspace.key,
                              json={"boardSlug": "features", "title": "OIDC voters", "content": "Please."}).json()
    vote = workspace.api.post(f"{workspace.path}/posts/{post['id']}/vote", key=session["token"])
    assert vote.status_code in (200, 201) and vote.json()["voted"] is True, vote.text
    comment = workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", key=session["token"], json={"content": "Yes"})
    assert comment.status_code == 201, comment.text


def test_a_team_member_signs_in_as_such_only_from_the_team_domain(workspace, provider):
    configure(workspace, provider, teamEmailDomain="example.com")
    inside, outside = email_of("example.com"), email_of("elsewhere.org")
    join(workspace, inside)
    join(workspace, outside)

    query = authorize(workspace, inside, provider)
    r = callback(workspace, query["state"], query["code"])
    assert r.status_code == 201, r.text
    assert r.json()["role"] == "manager"
    assert workspace.api.get("/me", key=r.json()["token"]).json()["role"] == "manager"

    # A member with an address of another domain is an end user here, and end users may not
    # use OpenID Connect on this workspace (the default methods).
    query = authorize(workspace, outside, provider)
    assert "team only" in assert_error(callback(workspace, query["state"], query["code"]), 403)

    offer_to_end_users(workspace)
    query = authorize(workspace, outside, provider)
    r = callback(workspace, query["state"], query["code"])
    assert r.status_code == 201 and r.json()["role"] is None


def test_end_users_are_refused_unless_the_workspace_offers_it(workspace, provider, people_db):
    configure(workspace, provider)
    email = email_of()
    query = authorize(workspace, email, provider)
    assert_error(callback(workspace, query["state"], query["code"]), 403)
    assert people_db["persons"].find_one({"email": email}) is None


# -- hostile answers ----------------------------------------------------------------------------


def test_a_wrong_state_is_refused(workspace, other_workspace, provider):
    for ws in (workspace, other_workspace):
        configure(ws, provider)
        offer_to_end_users(ws)
    query = authorize(workspace, email_of(), provider)
    assert_error(callback(workspace, "x" * 43, query["code"]), 400)
    # The state of one workspace is no use on another (and stays usable on its own).
    assert_error(callback(other_workspace, query["state"], query["code"]), 400)
    assert callback(workspace, query["state"], query["code"]).status_code == 201


def test_a_state_works_once(workspace, provider):
    configure(workspace, provider)
    offer_to_end_users(workspace)
    query = authorize(workspace, email_of(), provider)
    assert callback(workspace, query["state"], query["code"]).status_code == 201
    assert "start again" in assert_error(callback(workspace, query["state"], query["code"]), 400)


def test_an_id_token_with_another_nonce_is_refused(workspace, provider, people_db):
    configure(workspace, provider)
    offer_to_end_users(workspace)
    query = authorize(workspace, email_of(), provider)
    # The provider put the nonce it was sent into the id_token; the sign-in now expects another.
    changed = people_db["oidc_states"].update_one({"_id": query["state"]}, {"$set": {"nonce": "n" * 43}})
    assert changed.modified_count == 1
    assert "nonce" in assert_error(callback(workspace, query["state"], query["code"]), 400)


# -- the id_token validator, against the provider's real keys ------------------------------------


@pytest.fixture(scope="module")
def provider_jwks(provider) -> dict:
    return requests.get(requests.get(provider + "/.well-known/openid-configuration", timeout=10).json()["jwks_uri"],
                        timeout=10).json()


@pytest.fixture(scope="module")
def own_key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": "not-the-providers"}, private=True)


def token(key: RSAKey, issuer: str, **claims) -> str:
    at = int(time.time())
    body = {"iss": issuer, "sub": "ada", "aud": CLIENT_ID, "iat": at, "exp": at + 300, "nonce": "the-nonce",
            "email": "ada@example.com", **claims}
    return jwt.encode({"alg": "RS256", "kid": key.kid}, {k: v for k, v in body.items() if v is not None}, key)


def test_the_validator_accepts_a_good_token_of_a_known_key(provider, provider_jwks, own_key):
    """The control: with our key in the JWKS, a token of right claims passes, so each refusal
    below is the claim's (or the key's) doing."""
    keys = {"keys": provider_jwks["keys"] + [own_key.as_dict(private=False)]}
    claims = verify_id_token(token(own_key, provider), keys, provider, CLIENT_ID, "the-nonce")
    assert claims["email"] == "ada@example.com"


def test_a_token_signed_by_a_key_not_in_the_jwks_is_refused(provider, provider_jwks, own_key):
    with pytest.raises(TokenRefused):
        verify_id_token(token(own_key, provider), provider_jwks, provider, CLIENT_ID, "the-nonce")
    # Not even with the provider's key id on it.
    foreign = RSAKey.generate_key(2048, parameters={"kid": provider_jwks["keys"][0].get("kid")}, private=True)
    with pytest.raises(TokenRefused):
        verify_id_token(token(foreign, provider), provider_jwks, provider, CLIENT_ID, "the-nonce")


@pytest.mark.parametrize("claims", [
    {"exp": int(time.time()) - 3600},  # expired (well past the leeway)
    {"exp": None},  # no expiry at all
    {"aud": "another-client"},
    {"aud": ["another-client", "a-third"]},
    {"aud": [CLIENT_ID, "another-client"]},  # several audiences, and no azp naming us
    {"iss": "https://issuer.example"},
    {"nonce": "another-nonce"},
    {"nonce": None},
], ids=["expired", "no-exp", "wrong-aud", "other-auds", "shared-aud-no-azp", "wrong-iss", "wrong-nonce", "no-nonce"])
def test_the_validator_refuses_a_token_of_wrong_claims(provider, provider_jwks, own_key, claims):
    keys = {"keys": provider_jwks["keys"] + [own_key.as_dict(private=False)]}
    with pytest.raises(TokenRefused):
        verify_id_token(token(own_key, provider, **claims), keys, provider, CLIENT_ID, "the-nonce")
