"""The audit log filtered by type (GET /audit-log?type=): the entries of that type only, newest
first and paged like the whole log; an unknown type is a 400."""

from __future__ import annotations

from testkit.api import assert_error

from .helpers import address, join


def test_the_audit_log_filters_by_type(workspace, api):
    path = f"{workspace.path}/audit-log"
    for n in range(3):
        join(workspace, address(f"filter-{n}"), "manager")
    whole = api.get(path, key=workspace.key).json()["items"]
    invited = [e for e in whole if e["type"] == "invitation.created"]
    assert len(invited) == 3 and len(whole) > 3
    r = api.get(path, params={"type": "invitation.created"}, key=workspace.key)
    assert r.status_code == 200, r.text
    assert r.json()["items"] == invited  # the same entries, in the same order
    page = api.get(path, params={"type": "invitation.created", "limit": 2, "offset": 2}, key=workspace.key).json()["items"]
    assert page == invited[2:]
    assert api.get(path, params={"type": "passkey.removed"}, key=workspace.key).json()["items"] == []
    assert_error(api.get(path, params={"type": "nonsense"}, key=workspace.key), 400)
    assert_error(api.get(path, params={"type": "invitation.created"}), 401)
