"""Team members: invitations by mail, roles, the last owner, removal, attribution of sessions."""

from __future__ import annotations

from testkit.api import assert_error
from testkit.mail import link_in, text_of, wait_for_mail

from .helpers import address, invite, join, token_of


def test_an_invitation_is_mailed_and_its_link_makes_a_signed_in_member(workspace, maildir, api):
    email = address("ada")
    invitation = invite(workspace, email, "owner")
    message = wait_for_mail(maildir, to=email)
    assert message["Auto-Submitted"] == "auto-generated" and message["Message-ID"]
    link = link_in(message, "http")
    assert link == invitation["link"] and f"/b/{workspace.slug}/join?token=" in link
    assert "owner" in text_of(message)
    r = api.post(f"{workspace.path}/invitations/accept", json={"token": token_of(link)})
    assert r.status_code == 201, r.text
    session = r.json()
    assert session["role"] == "owner" and session["token"].startswith("fbs_")
    # Where the new member lands: their workspace's board (README), not the account page.
    assert session["next"] == f"/b/{workspace.slug}"
    me = api.get("/me", key=session["token"]).json()
    assert me["role"] == "owner" and me["email"] == email and me["id"].startswith("person:")
    members = api.get(f"{workspace.path}/members", key=session["token"]).json()["items"]
    assert [m["email"] for m in members] == [email]
    again = api.post(f"{workspace.path}/invitations/accept", json={"token": token_of(link)})
    assert_error(again, 400)  # single use


def test_an_invitation_names_the_member_who_sent_it_else_the_workspace_invites(workspace, maildir, api):
    """The operator (``feedback invite``) and the operator's keys are nobody to the invited: the
    workspace invites in its own name. A member, signed in or through a key they made, is named
    with the address the invited can check (issue 36: it said "Operator invited you")."""
    def invitation_text(key: str | None = None) -> str:
        email = address("invited")
        invite(workspace, email, "manager", key=key)
        return text_of(wait_for_mail(maildir, to=email))

    for text in (invitation_text(), invitation_text(workspace.key)):  # the operator, the operator's key
        assert text.startswith("You're invited to join Acme's feedback team as manager."), text
        assert "Operator" not in text and "on behalf of" not in text
    owner_email = address("owner")
    owner = join(workspace, owner_email, "owner")
    r = api.post(f"{workspace.path}/api-keys", key=owner["token"], json={"name": "Owner's script"})
    assert r.status_code == 201, r.text
    name = owner_email.split("@")[0]  # a person's name until they choose one
    for text in (invitation_text(owner["token"]), invitation_text(r.json()["key"])):
        assert text.startswith(f"{name} ({owner_email}) invited you to join Acme's feedback team as manager."), text
        assert f"on behalf of {name} ({owner_email})" in text and "Owner's script" not in text


def test_an_invitation_works_on_its_own_workspace_only(workspace, other_workspace, api):
    invitation = invite(workspace, address())
    r = api.post(f"{other_workspace.path}/invitations/accept", json={"token": token_of(invitation["link"])})
    assert_error(r, 400)


def test_a_member_session_acts_as_a_manager_and_is_refused_elsewhere(workspace, other_workspace, api):
    session = join(workspace, address())
    token = session["token"]
    r = api.post(f"{workspace.path}/api-keys", key=token, json={"name": "by a person"})
    assert r.status_code == 201, r.text
    r = api.get(f"{other_workspace.path}/members", key=token)
    assert_error(r, 403)


def test_managers_cannot_manage_members_but_owners_can(workspace, api):
    manager = join(workspace, address("manager"))
    assert_error(api.post(f"{workspace.path}/members", key=manager["token"], json={"email": address(), "role": "manager"}), 403)
    owner = join(workspace, address("owner"), "owner")
    r = api.post(f"{workspace.path}/members", key=owner["token"], json={"email": address(), "role": "manager"})
    assert r.status_code == 201, r.text
    assert r.json()["invitedBy"]["id"].startswith("person:")


def test_the_last_owner_can_be_neither_removed_nor_demoted(workspace, api):
    owner = join(workspace, address("owner"), "owner")
    me = api.get("/me", key=owner["token"]).json()
    person_id = me["person"]["id"]
    assert_error(api.delete(f"{workspace.path}/members/{person_id}", key=workspace.key), 409)
    assert_error(api.patch(f"{workspace.path}/members/{person_id}", key=workspace.key, json={"role": "manager"}), 409)
    second = join(workspace, address("second"), "owner")
    r = api.patch(f"{workspace.path}/members/{person_id}", key=second["token"], json={"role": "manager"})
    assert r.status_code == 200 and r.json()["role"] == "manager", r.text


def test_a_removed_members_sessions_are_refused_on_their_next_request(workspace, api):
    session = join(workspace, address())
    token = session["token"]
    assert api.get(f"{workspace.path}/members", key=token).status_code == 200
    person_id = api.get("/me", key=token).json()["person"]["id"]
    assert api.delete(f"{workspace.path}/members/{person_id}", key=workspace.key).status_code == 204
    assert_error(api.get(f"{workspace.path}/members", key=token), 401)
    assert_error(api.get("/me", key=token), 401)


def test_a_role_change_ends_the_members_sessions(workspace, api):
    session = join(workspace, address(), "owner")
    join(workspace, address("keeper"), "owner")
    person_id = api.get("/me", key=session["token"]).json()["person"]["id"]
    r = api.patch(f"{workspace.path}/members/{person_id}", key=workspace.key, json={"role": "manager"})
    assert r.status_code == 200, r.text
    assert_error(api.get("/me", key=session["token"]), 401)


def test_inviting_a_member_again_is_a_conflict_and_a_new_invitation_replaces_a_pending_one(workspace, api):
    email = address()
    first = invite(workspace, email)
    second = invite(workspace, email)
    pending = api.get(f"{workspace.path}/invitations", key=workspace.key).json()["items"]
    assert [i["id"] for i in pending if i["email"] == email] == [second["id"]]
    assert_error(api.post(f"{workspace.path}/invitations/accept", json={"token": token_of(first["link"])}), 400)
    assert api.post(f"{workspace.path}/invitations/accept", json={"token": token_of(second["link"])}).status_code == 201
    assert_error(api.post(f"{workspace.path}/members", key=workspace.key, json={"email": email, "role": "owner"}), 409)


def test_bad_input_is_a_clear_400(workspace, api):
    for body in ({"email": "not an address", "role": "manager"}, {"email": address(), "role": "king"}, {}):
        assert_error(api.post(f"{workspace.path}/members", key=workspace.key, json=body), 400)
    assert_error(api.patch(f"{workspace.path}/members/nope", key=workspace.key, json={"role": "owner"}), 404)


def test_the_audit_log_names_who_did_what(workspace, api):
    email = address()
    session = join(workspace, email, "owner")
    join(workspace, address("keeper"), "owner")
    person_id = api.get("/me", key=session["token"]).json()["person"]["id"]
    api.patch(f"{workspace.path}/members/{person_id}", key=workspace.key, json={"role": "manager"})
    entries = api.get(f"{workspace.path}/audit-log", key=workspace.key).json()["items"]
    types = [e["type"] for e in entries]
    assert {"invitation.created", "invitation.accepted", "sign_in", "member.role_changed"} <= set(types)
    change = next(e for e in entries if e["type"] == "member.role_changed")
    assert change["actor"]["id"].startswith("key:") and change["data"]["member"]["id"] == f"person:{person_id}"
    assert_error(api.get(f"{workspace.path}/audit-log"), 401)
