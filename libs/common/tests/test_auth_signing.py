"""Pure logic: the internal signature binds caller, method and path."""

from common import auth


def test_signature_round_trip_and_tampering():
    caller = auth.Caller(kind=auth.MANAGER, workspace="acme", key_id="k1")
    headers = auth.signed_headers("secret", "PATCH", "/v1/workspaces/acme/settings", caller)
    header, signature = headers[auth.CALLER_HEADER], headers[auth.SIGNATURE_HEADER]
    assert auth.verify("secret", "PATCH", "/v1/workspaces/acme/settings", header, signature)
    assert auth.Caller.from_header(header) == caller
    assert not auth.verify("other", "PATCH", "/v1/workspaces/acme/settings", header, signature)
    assert not auth.verify("secret", "DELETE", "/v1/workspaces/acme/settings", header, signature)
    assert not auth.verify("secret", "PATCH", "/v1/workspaces/evil/settings", header, signature)
    forged = header.replace("manager", "admin")
    assert not auth.verify("secret", "PATCH", "/v1/workspaces/acme/settings", forged, signature)


def test_manager_rights():
    assert auth.Caller(kind=auth.MANAGER, workspace="a").is_manager_of("a")
    assert not auth.Caller(kind=auth.MANAGER, workspace="a").is_manager_of("b")
    assert auth.Caller(kind=auth.ADMIN).is_manager_of("b")
    assert not auth.Caller(kind=auth.USER, workspace="a").is_manager_of("a")
