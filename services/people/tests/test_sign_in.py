"""Signing in by email link and by SSO token; sessions; sign-out."""

from __future__ import annotations

from testkit.api import assert_error, wait_for

from .helpers import address, join, mailed_link, sign_in_by_mail, token_of


def new_post(workspace, title: str) -> dict:
    board = workspace.board()
    r = workspace.api.post(f"{workspace.path}/posts", key=workspace.key,
                           json={"boardSlug": board["slug"], "title": title, "content": "Please."})
    assert r.status_code == 201, r.text
    return r.json()


def test_an_end_user_signs_in_by_email_link_and_votes_as_themselves(workspace, maildir, api):
    email = address("user")
    session = sign_in_by_mail(workspace, maildir, email)
    assert session["role"] is None and session["user"]["email"] == email
    post = new_post(workspace, "Dark mode")
    r = api.post(f"{workspace.path}/posts/{post['id']}/vote", key=session["token"])
    assert r.status_code in (200, 201) and r.json()["voteCount"] == 1, r.text


def test_known_and_unknown_addresses_are_answered_identically(workspace, api):
    member = address("member")
    join(workspace, member)
    api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key, json={"endUserMethods": []})
    known = api.post(f"{workspace.path}/sign-in/email", json={"email": member})
    unknown = api.post(f"{workspace.path}/sign-in/email", json={"email": address("stranger")})
    assert (known.status_code, known.json()) == (unknown.status_code, unknown.json()) == (202, known.json())


def test_a_link_works_once_on_its_own_workspace_and_not_after_it_expires(workspace, other_workspace, maildir, api, stack):
    email = address()
    api.post(f"{workspace.path}/sign-in/email", json={"email": email})
    token = token_of(mailed_link(maildir, email, "/sign-in/email"))
    assert_error(api.post(f"{other_workspace.path}/sign-in/email/redeem", json={"token": token}), 400)
    assert api.post(f"{workspace.path}/sign-in/email/redeem", json={"token": token}).status_code == 201
    assert_error(api.post(f"{workspace.path}/sign-in/email/redeem", json={"token": token}), 400)
    # An expired one: its expiry moved to the past in the database.
    api.post(f"{workspace.path}/sign-in/email", json={"email": email})
    expired = token_of(mailed_link(maildir, email, "/sign-in/email", after=1))
    import hashlib
    from datetime import datetime, timedelta, timezone

    import pymongo

    links = pymongo.MongoClient(stack.mongodb_uri)["feedback_people"]["sign_in_links"]
    links.update_one({"_id": hashlib.sha256(expired.encode()).hexdigest()},
                     {"$set": {"expiresAt": datetime.now(timezone.utc) - timedelta(seconds=1)}})
    assert_error(api.post(f"{workspace.path}/sign-in/email/redeem", json={"token": expired}), 400)


def test_next_may_only_be_a_path_of_the_board(workspace, maildir, api):
    email = address()
    api.post(f"{workspace.path}/sign-in/email", json={"email": email, "next": "/b/../evil"})
    evil = api.post(f"{workspace.path}/sign-in/email", json={"email": email, "next": "https://evil.example/x"})
    assert evil.status_code == 202  # ignored, not refused: the link is sent without it
    for after in (0, 1):
        link = mailed_link(maildir, email, "/sign-in/email", after=after)
        assert "evil" not in link
        r = api.post(f"{workspace.path}/sign-in/email/redeem", json={"token": token_of(link)})
        assert r.json()["next"] is None
    api.post(f"{workspace.path}/sign-in/email", json={"email": email, "next": f"/b/{workspace.slug}/roadmap"})
    link = mailed_link(maildir, email, "/sign-in/email", after=2)
    r = api.post(f"{workspace.path}/sign-in/email/redeem", json={"token": token_of(link)})
    assert r.json()["next"] == f"/b/{workspace.slug}/roadmap"


def test_links_for_one_address_are_limited(workspace, api):
    email = address()
    answers = [api.post(f"{workspace.path}/sign-in/email", json={"email": email}).status_code for _ in range(30)]
    assert answers[:5] == [202] * 5 and set(answers[5:]) == {429}


def test_an_sso_token_and_an_email_link_of_one_address_are_one_person_with_one_vote(workspace, maildir, api):
    email = address("same")
    post = new_post(workspace, "One vote each")
    jwt = workspace.user_token("crm-42", email=email, name="Sam")
    assert api.post(f"{workspace.path}/posts/{post['id']}/vote", user=jwt).json()["voteCount"] == 1
    session = sign_in_by_mail(workspace, maildir, email)
    again = api.post(f"{workspace.path}/posts/{post['id']}/vote", key=session["token"])
    assert again.json()["voteCount"] == 1 and again.json()["voted"] is True
    assert api.get("/me", user=None, key=session["token"]).json()["id"] == api.post(
        f"{workspace.path}/sessions", user=jwt).json()["user"]["id"]


def test_an_sso_token_never_makes_a_team_member(workspace, api):
    email = address("member")
    join(workspace, email, "owner")
    jwt = workspace.user_token("crm-1", email=email)
    session = api.post(f"{workspace.path}/sessions", user=jwt)
    assert session.status_code == 201 and session.json()["role"] is None
    assert_error(api.get(f"{workspace.path}/members", key=session.json()["token"]), 403)


def test_sign_out_and_sign_out_everywhere(workspace, other_workspace, maildir, api):
    email = address()
    here = sign_in_by_mail(workspace, maildir, email)
    there = sign_in_by_mail(other_workspace, maildir, email, after=1)
    also_here = sign_in_by_mail(workspace, maildir, email, after=2)
    assert api.post("/me/sign-out", key=here["token"]).status_code == 204
    assert_error(api.get("/me", key=here["token"]), 401)
    assert api.get("/me", key=also_here["token"]).status_code == 200
    r = api.post("/me/sign-out-everywhere", key=also_here["token"])
    assert r.status_code == 200 and r.json()["ended"] == 2
    assert_error(api.get("/me", key=there["token"]), 401)


def test_a_person_chooses_their_language_however_they_signed_in(workspace, maildir, api):
    session = sign_in_by_mail(workspace, maildir, address())["token"]
    assert api.get("/me", key=session).json()["locale"] is None
    r = api.patch("/me", key=session, json={"locale": "ja"})
    assert r.status_code == 200 and r.json()["locale"] == "ja" and r.json()["person"]["locale"] == "ja", r.text
    assert api.get("/me", key=session).json()["locale"] == "ja"
    assert api.patch("/me", key=session, json={"locale": None}).json()["locale"] is None  # back to the browser's
    assert_error(api.patch("/me", key=session, json={"locale": "xx"}), 400)
    # A person whose name comes from an SSO token may not rename themselves, but their language is theirs.
    sso = api.post(f"{workspace.path}/sessions", user=workspace.user_token("u-lang", email=address(), name="Lin")).json()["token"]
    assert_error(api.patch("/me", key=sso, json={"name": "Renamed"}), 403)
    assert api.patch("/me", key=sso, json={"locale": "zh-CN"}).json()["locale"] == "zh-CN"
    assert api.get("/me", key=sso).json()["name"] == "Lin"


def test_a_person_changes_their_name_and_it_shows_at_once(workspace, maildir, api):
    session = sign_in_by_mail(workspace, maildir, address())
    r = api.patch("/me", key=session["token"], json={"name": "Grace Hopper"})
    assert r.status_code == 200 and r.json()["name"] == "Grace Hopper"
    wait_for(lambda: api.get("/me", key=session["token"]).json()["name"] == "Grace Hopper", what="the new name")
    assert_error(api.patch("/me", key=session["token"], json={"name": "   "}), 400)
    assert_error(api.patch("/me", key=workspace.key, json={"name": "A key"}), 403)
