"""The third hardening pass, each finding against the running platform: who may become an owner,
whose email a token may claim, and how often the platform mails an address on a team's word.

Passkeys registered from an end user's session are in test_passkeys.py; the OpenID Connect
fetches in test_oidc_hostile.py.
"""

from __future__ import annotations

from testkit.api import assert_error, create_workspace, wait_for
from testkit.mail import link_in, text_of, wait_for_mail

from .helpers import address, join, sign_in_by_mail, token_of


def key_of(ws, session: str, **fields) -> str:
    r = ws.api.post(f"{ws.path}/api-keys", key=session, json={"name": "made by a member", **fields})
    assert r.status_code == 201, r.text
    return r.json()["key"]


def person_id(ws, session: str) -> str:
    return ws.api.get("/me", key=session).json()["person"]["id"]


# -- 1. a manager's key acts as its maker; a removed member's keys and invitations go with them ------


def test_a_key_a_manager_made_cannot_make_anyone_an_owner(workspace, api):
    manager = join(workspace, address("manager"), "manager")
    key = key_of(workspace, manager["token"])
    derived = key_of(workspace, key, role="manager")
    me = person_id(workspace, manager["token"])
    for credential in (key, derived):
        assert_error(api.patch(f"{workspace.path}/members/{me}", key=credential, json={"role": "owner"}), 403)
        assert_error(api.post(f"{workspace.path}/members", key=credential, json={"email": address(), "role": "owner"}), 403)
        assert_error(api.patch(f"{workspace.path}/sign-in-settings", key=credential, json={"endUserMethods": ["email"]}), 403)
        # Still a manager's key: it does what the manager may.
        assert api.get(f"{workspace.path}/members", key=credential).status_code == 200
    # An owner's key manages the team, as its owner does.
    owner = join(workspace, address("owner"), "owner")
    owners_key = key_of(workspace, owner["token"])
    assert api.post(f"{workspace.path}/members", key=owners_key, json={"email": address(), "role": "manager"}).status_code == 201


def test_a_removed_members_keys_stop_and_are_revoked(workspace, api):
    manager = join(workspace, address("leaver"), "manager")
    key = key_of(workspace, manager["token"])
    derived = key_of(workspace, key, role="read")
    assert api.get(f"{workspace.path}/settings", key=key).status_code == 200
    leaver = person_id(workspace, manager["token"])
    assert api.delete(f"{workspace.path}/members/{leaver}", key=workspace.key).status_code == 204
    for credential in (key, derived):
        # Refused once the gateway's short memory of the key's answer lapses (AUTH_CACHE_SECONDS).
        wait_for(lambda c=credential: api.get(f"{workspace.path}/settings", key=c).status_code == 401, timeout=30,
                 what="the removed member's key to be refused")
    keys = lambda: {k["name"]: k for k in api.get(f"{workspace.path}/api-keys", key=workspace.key).json()["items"]}
    wait_for(lambda: all(k["revokedAt"] for name, k in keys().items() if name == "made by a member"),
             what="the removed member's keys to be revoked")
    assert keys()["Default manager key"]["revokedAt"] is None


def test_an_invitation_from_an_owner_who_left_is_void(workspace, maildir, api):
    join(workspace, address("stays"), "owner")  # the last owner may not leave
    owner = join(workspace, address("owner"), "owner")
    invited = address("invited")
    r = api.post(f"{workspace.path}/members", key=owner["token"], json={"email": invited, "role": "owner"})
    assert r.status_code == 201 and "link" not in r.json(), r.text  # an owner is mailed, never shown, the link
    link = link_in(wait_for_mail(maildir, to=invited), "http")
    owners_key = key_of(workspace, owner["token"])
    by_key = address("by-key")
    assert api.post(f"{workspace.path}/members", key=owners_key, json={"email": by_key, "role": "owner"}).status_code == 201
    key_link = link_in(wait_for_mail(maildir, to=by_key), "http")
    assert api.delete(f"{workspace.path}/members/{person_id(workspace, owner['token'])}", key=workspace.key).status_code == 204
    pending = api.get(f"{workspace.path}/invitations", key=workspace.key).json()["items"]
    assert invited not in {i["email"] for i in pending}  # what the owner sent left with them
    for token in (token_of(link), token_of(key_link)):
        assert_error(api.post(f"{workspace.path}/invitations/accept", json={"token": token}), 400)


# -- 4. what a workspace asserts is its word alone --------------------------------------------------


def test_another_workspaces_sso_token_neither_renames_a_person_nor_ends_their_sessions(workspace, admin_token, maildir, api):
    email = address("owner")
    home = sign_in_by_mail(workspace, maildir, email)
    assert api.patch("/me", key=home["token"], json={"name": "Ada"}).status_code == 200
    stranger = create_workspace(api, admin_token, name="Stranger")
    jwt = stranger.user_token("victim", email=email, name="Mallory's pick")
    session = api.post(f"{stranger.path}/sessions", user=jwt).json()["token"]
    assert_error(api.patch("/me", key=session, json={"name": "Renamed"}), 403)
    r = api.post("/me/sign-out-everywhere", key=session)
    assert r.status_code == 200 and r.json()["ended"] == 1  # its own session on its own workspace
    me = api.get("/me", key=home["token"])
    assert me.status_code == 200 and me.json()["name"] == "Ada" and me.json()["avatarUrl"] is None


def test_only_the_operator_is_shown_an_invitations_link(workspace, admin_token, maildir, api):
    email = address("target")
    r = api.post(f"{workspace.path}/members", key=workspace.key, json={"email": email, "role": "owner"})
    assert r.status_code == 201 and "link" not in r.json(), r.text
    assert "/join?token=" in link_in(wait_for_mail(maildir, to=email), "http")
    r = api.post(f"{workspace.path}/members", key=admin_token, json={"email": address(), "role": "owner"})
    assert r.status_code == 201 and "/join?token=" in r.json()["link"]


# -- 6 and 8. how often, and in whose name, the platform mails an address ----------------------------


def test_asking_elsewhere_never_locks_an_address_out_of_its_own_workspace(workspace, admin_token, maildir, api):
    email = address("busy")
    sign_in_by_mail(workspace, maildir, email)
    others = [create_workspace(api, admin_token, name=f"Other {i}") for i in range(3)]
    for ws in others:
        ws.api.patch(f"{ws.path}/sign-in-settings", key=ws.key, json={"endUserMethods": ["email"]})
    # Its first link home was asked as a stranger too (it had never signed in there): with four
    # more from boards it never signed in to, a sixth stranger is refused...
    for ws in [others[0]] * 2 + [others[1]] * 2:
        assert api.post(f"{ws.path}/sign-in/email", json={"email": email}).status_code == 202
    assert_error(api.post(f"{others[2].path}/sign-in/email", json={"email": email}), 429)
    # ...and its own workspace still mails it.
    assert api.post(f"{workspace.path}/sign-in/email", json={"email": email}).status_code == 202


def test_mails_say_who_sent_them_and_a_team_invites_a_bounded_number(workspace, maildir, api, stack):
    owner_email = address("owner")
    owner = join(workspace, owner_email, "owner")
    invited = address("invited")
    assert api.post(f"{workspace.path}/members", key=owner["token"], json={"email": invited, "role": "manager"}).status_code == 201
    text = text_of(wait_for_mail(maildir, to=invited))
    assert owner_email in text and f"/b/{workspace.slug}/" in text and "on behalf of" in text
    asker = address("asker")
    api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key, json={"endUserMethods": ["email"]})
    assert api.post(f"{workspace.path}/sign-in/email", json={"email": asker}).status_code == 202
    assert "sign-in page" in text_of(wait_for_mail(maildir, to=asker))
    # The team's invitations per hour are capped (PEOPLE_INVITATIONS_PER_HOUR, 30): the 31st is refused.
    for _ in range(29):
        assert api.post(f"{workspace.path}/members", key=owner["token"], json={"email": address(), "role": "manager"}).status_code == 201
    r = api.post(f"{workspace.path}/members", key=owner["token"], json={"email": address(), "role": "manager"})
    assert_error(r, 429)
    assert r.headers["Retry-After"]
