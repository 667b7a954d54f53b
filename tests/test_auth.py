"""End-user tokens (SSO JWT) and anonymous callers, as the gateway and workspaces decide them."""

import time

import jwt
import pytest


def test_user_token_must_be_signed_with_the_workspace_secret(api, workspace, other_workspace):
    token = workspace.user_token("alice")
    # a valid token authenticates (an end user may read public things but not manage)
    assert api.get(f"{workspace.path}/branding", user=token).status_code == 200
    assert api.get(f"{workspace.path}/settings", user=token).status_code == 403
    # the same token on another workspace is not valid there
    other_workspace.user_token("bob")  # gives the other workspace an ssoSecret
    assert api.get(f"{other_workspace.path}/branding", user=token).status_code == 401


def soon() -> int:
    return int(time.time()) + 600


@pytest.mark.parametrize(
    "make_token",
    [
        lambda secret: jwt.encode({"id": "a", "exp": int(time.time()) - 300}, secret, algorithm="HS256"),  # expired (past the leeway)
        lambda secret: jwt.encode({"id": "a", "exp": soon()}, "wrong-secret-wrong-secret", algorithm="HS256"),  # forged
        lambda secret: jwt.encode({"id": "a", "exp": soon()}, None, algorithm="none"),  # alg none
        lambda secret: jwt.encode({"name": "no id", "exp": soon()}, secret, algorithm="HS256"),  # no identity claim
        lambda secret: jwt.encode({"id": "a", "exp": soon()}, secret, algorithm="HS512"),  # another algorithm
    ],
    ids=["expired", "forged", "alg-none", "no-id", "hs512"],
)
def test_bad_user_tokens_are_refused(api, workspace, make_token):
    workspace.user_token("seed")  # sets the secret
    r = api.get(f"{workspace.path}/branding", user=make_token(workspace.sso_secret))
    assert r.status_code == 401, r.text
    assert "token" in r.json()["error"]


def test_user_token_without_sso_secret_configured(api, workspace):
    token = jwt.encode({"id": "a"}, "some-secret-some-secret", algorithm="HS256")
    r = api.get(f"{workspace.path}/branding", user=token)
    assert r.status_code == 401 and "ssoSecret" in r.json()["error"]
