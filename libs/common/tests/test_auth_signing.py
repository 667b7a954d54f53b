"""Pure logic: the internal signature binds service, method, path, query, body, caller and time."""

import time

from common import auth

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
