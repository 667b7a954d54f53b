"""The board's people pages through the gateway, as a browser without JavaScript sees them:
sign-in by email link, invitations, the account page, the team page."""

from __future__ import annotations

import re

import pytest

from .helpers import Visitor, create_post, csrf_of, form_csrf, invite, join_team, team_member


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    return Visitor(stack.url, workspace.slug)


def mailed_link(maildir, to: str, path: str) -> str:
    from testkit.mail import link_in, wait_for_mail

    return link_in(wait_for_mail(maildir, to=to), path)


def test_an_end_user_signs_in_by_email_link_and_votes_as_themselves(site, workspace, maildir):
    workspace.settings(anonVote=False)
    post = create_post(workspace, "Needs a person")
    page = site.get("/sign-in?next=" + f"/b/{workspace.slug}/p/{post['id']}")
    assert page.status_code == 200 and "Email me a sign-in link" in page.text and "Sign in with a passkey" in page.text
    assert f'name="next" value="/b/{workspace.slug}/p/{post["id"]}"' in page.text
    sent = site.post("/sign-in", {"csrf": form_csrf(page.text, f"/b/{workspace.slug}/sign-in"), "email": "Reader@Example.com",
                                  "next": f"/b/{workspace.slug}/p/{post['id']}"})
    assert sent.status_code == 200 and "Check your mail" in sent.text, re.findall(r"role=.alert.>([^<]*)<", sent.text)
    link = mailed_link(maildir, "reader@example.com", f"/b/{workspace.slug}/sign-in/email?")
    path = link.split(f"/b/{workspace.slug}", 1)[1]
    # opening the link signs nobody in; the page's button does
    shown = site.get(path, allow_redirects=False)
    assert shown.status_code == 200 and "fb_session" not in site.http.cookies
    token = re.search(r"token=([^&]+)", link).group(1)
    done = site.post("/sign-in/email", {"csrf": form_csrf(shown.text, f"/b/{workspace.slug}/sign-in/email"), "token": token},
                     allow_redirects=False)
    assert done.status_code == 303 and done.headers["Location"] == f"/b/{workspace.slug}/p/{post['id']}"
    assert "Signed in as reader" in site.get().text
    voted = site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(site.get().text), "action": "vote"})
    assert voted.status_code == 200 and workspace.api.get(f"{workspace.path}/posts/{post['id']}").json()["voteCount"] == 1
    # the link works once
    again = Visitor(site.base, workspace.slug)
    shown = again.get(path)
    refused = again.post("/sign-in/email", {"csrf": form_csrf(shown.text, f"/b/{workspace.slug}/sign-in/email"), "token": token})
    assert refused.status_code == 400 and "fb_session" not in again.http.cookies


def test_a_bad_address_shows_the_form_again(site, workspace):
    page = site.get("/sign-in")
    r = site.post("/sign-in", {"csrf": form_csrf(page.text, f"/b/{workspace.slug}/sign-in"), "email": "not an address"})
    assert r.status_code == 400 and 'role="alert"' in r.text and "Email me a sign-in link" in r.text
    assert site.post("/sign-in", {"email": "a@example.com"}).status_code == 403  # no CSRF proof


def test_an_invitation_signs_in_once_and_an_owner_manages_the_team(site, workspace):
    link = invite(workspace, "first-owner@example.com")
    owner = Visitor(site.base, workspace.slug)
    joined = join_team(owner, link, allow_redirects=False)
    # on the first-run setup: an owner of a workspace without a board (the setup leads to the board)
    assert joined.status_code == 303 and joined.headers["Location"] == f"/b/{workspace.slug}/admin/setup"
    # a used invitation is refused
    assert join_team(Visitor(site.base, workspace.slug), link).status_code == 400
    team = owner.get("/admin/team")
    assert team.status_code == 200 and "first-owner@example.com" in team.text and "Send the invitation" in team.text
    invited = owner.post("/admin/team", {"csrf": csrf_of(team.text), "email": "colleague@example.com", "role": "manager"})
    assert invited.status_code == 200 and "Invitation sent to <strong>colleague@example.com</strong>" in invited.text
    assert "colleague@example.com (Manager)" in invited.text
    twice = owner.post("/admin/team", {"csrf": csrf_of(team.text), "email": "first-owner@example.com", "role": "owner"})
    assert twice.status_code == 409 and "member of this workspace already" in twice.text
    # the last owner can be neither demoted nor removed
    me = re.search(r'data-member-id="([0-9a-f]{24})"', team.text).group(1)
    for form in ({"action": "role", "role": "manager"}, {"action": "remove"}):
        r = owner.post(f"/admin/team/members/{me}", {"csrf": csrf_of(team.text), **form})
        assert r.status_code == 409 and "last owner" in r.text
    # a manager sees the team but cannot change it
    colleague = team_member(site.base, workspace, "manager-two@example.com", "manager")
    seen = colleague.get("/admin/team")
    assert seen.status_code == 200 and "first-owner@example.com" in seen.text and "Send the invitation" not in seen.text
    refused = colleague.post(f"/admin/team/members/{me}", {"csrf": csrf_of(seen.text), "action": "remove"})
    assert refused.status_code == 403
    # the owner makes the colleague an owner: the colleague's session ends (a role change rotates it)
    members = workspace.api.get(f"{workspace.path}/members", key=workspace.key).json()["items"]
    two = next(m["id"] for m in members if m["email"] == "manager-two@example.com")
    r = owner.post(f"/admin/team/members/{two}", {"csrf": csrf_of(team.text), "action": "role", "role": "owner"})
    assert r.status_code == 200 and f'id="role-{two}"' in r.text
    assert f'href="/b/{workspace.slug}/admin"' not in colleague.get().text
    # an end user and an anonymous visitor are sent to sign in
    assert Visitor(site.base, workspace.slug).get("/admin/team", allow_redirects=False).status_code == 303


def test_the_account_page_renames_and_signs_out_everywhere(site, workspace):
    assert site.get("/account", allow_redirects=False).headers["Location"].startswith(f"/b/{workspace.slug}/sign-in?next=")
    member = team_member(site.base, workspace, "account-owner@example.com")
    other_browser = Visitor(site.base, workspace.slug)
    join_team(other_browser, invite(workspace, "someone-else@example.com"))
    page = member.get("/account")
    assert page.status_code == 200 and "account-owner@example.com" in page.text and "Sign out everywhere" in page.text
    r = member.post("/account", {"csrf": csrf_of(page.text), "name": "Ada Lovelace"})
    assert r.status_code == 200 and "Signed in as Ada Lovelace" in r.text
    # a team reply carries the new name
    post = create_post(workspace, "Named replies")
    r = member.post(f"/p/{post['id']}/comments", {"csrf": csrf_of(r.text), "content": "From Ada"})
    assert '<span class="author">Ada Lovelace</span>' in r.text
    r = member.post("/account/sign-out-everywhere", {"csrf": csrf_of(member.get("/account").text)})
    assert r.status_code == 200 and "fb_session" not in member.http.cookies
    assert "Signed in as someone-else" in other_browser.get().text  # another person's sessions stay


def test_a_person_downloads_their_data_and_erases_their_account_from_the_account_page(site, workspace, maildir):
    email = "leaving-reader@example.com"
    page = site.get("/sign-in")
    site.post("/sign-in", {"csrf": form_csrf(page.text, f"/b/{workspace.slug}/sign-in"), "email": email})
    link = mailed_link(maildir, email, f"/b/{workspace.slug}/sign-in/email?")
    shown = site.get(link.split(f"/b/{workspace.slug}", 1)[1])
    site.post("/sign-in/email", {"csrf": form_csrf(shown.text, f"/b/{workspace.slug}/sign-in/email"),
                                 "token": re.search(r"token=([^&]+)", link).group(1)})
    account = site.get("/account")
    assert "Download everything kept about you" in account.text and "Erase my account" in account.text
    data = site.get("/account/data")
    assert data.status_code == 200 and "attachment" in data.headers["Content-Disposition"]
    assert data.json()["person"]["email"] == email
    unconfirmed = site.post("/account/data", {"csrf": csrf_of(account.text)})
    assert unconfirmed.status_code == 400 and "fb_session" in site.http.cookies
    erased = site.post("/account/data", {"csrf": csrf_of(site.get("/account").text), "confirm": "erase"})
    assert erased.status_code == 200 and "Your data is erased" in erased.text and "fb_session" not in site.http.cookies
    assert workspace.api.get("/me/data", key=workspace.key).status_code == 403  # an API key has no data of its own
