"""The board's notification pages through the gateway, as a browser without JavaScript sees them:
the follow button, the preferences page, and a mail's unsubscribe link (opened, then its button;
and RFC 8058's one-click POST, which a mail provider makes without cookies or a form token)."""

from __future__ import annotations

import re
import uuid

import pytest
import requests

from .helpers import Visitor, create_post, csrf_of, form_csrf, team_member

MAIL_SECONDS = 30  # a notification goes through Kafka, the consumer and the mailer: seconds


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    return Visitor(stack.url, workspace.slug)


def address(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}@example.com"


def signed_in(site: Visitor, maildir, email: str) -> Visitor:
    """A new browser signed in as ``email`` by the emailed link, as a person does."""
    from testkit.mail import link_in, wait_for_mail

    person = Visitor(site.base, site.slug)
    page = person.get("/sign-in")
    sent = person.post("/sign-in", {"csrf": form_csrf(page.text, f"/b/{site.slug}/sign-in"), "email": email})
    assert sent.status_code == 200 and "Check your mail" in sent.text, sent.text
    link = link_in(wait_for_mail(maildir, to=email), f"/b/{site.slug}/sign-in/email?")
    token = re.search(r"token=([^&]+)", link).group(1)
    shown = person.get("/sign-in/email?token=" + token)
    done = person.post("/sign-in/email", {"csrf": form_csrf(shown.text, f"/b/{site.slug}/sign-in/email"), "token": token})
    assert done.status_code == 200 and "Signed in as" in done.text, done.text
    return person


def session_of(visitor: Visitor) -> str:
    """The people service's session token the browser's cookie holds (the API's Bearer)."""
    return visitor.http.cookies["fb_session"]


def preferences(workspace, visitor: Visitor) -> dict:
    r = workspace.api.get(f"{workspace.path}/me/notifications", key=session_of(visitor))
    assert r.status_code == 200, r.text
    return r.json()


def following(workspace, visitor: Visitor, post_id: str) -> bool:
    r = workspace.api.get(f"{workspace.path}/posts/{post_id}/follow", key=session_of(visitor))
    assert r.status_code == 200, r.text
    return r.json()["following"]


def follow_button(html: str) -> str:
    match = re.search(r'<button type="submit" class="follow-button" aria-pressed="(true|false)"[^>]*>([^<]+)</button>', html)
    assert match, "no follow button on the page"
    return f"{match.group(2)} (pressed={match.group(1)})"


def follow_on_page(person: Visitor, post_id: str):
    page = person.get(f"/p/{post_id}")
    csrf = form_csrf(page.text, f"/b/{person.slug}/p/{post_id}/follow")
    value = re.search(r'name="following" value="(true|false)"', page.text).group(1)
    return person.post(f"/p/{post_id}/follow", {"csrf": csrf, "following": value}, allow_redirects=False)


def test_a_signed_in_person_follows_and_unfollows_a_post_on_its_page(site, workspace, maildir):
    post = create_post(workspace, "Follow me")
    anonymous = site.get(f"/p/{post['id']}")
    assert "follow-button" not in anonymous.text
    assert f'href="/b/{workspace.slug}/sign-in?next=/b/{workspace.slug}/p/{post["id"]}">Sign in to follow' in anonymous.text

    person = signed_in(site, maildir, address("follower"))
    assert follow_button(person.get(f"/p/{post['id']}").text) == "Follow (pressed=false)"
    r = follow_on_page(person, post["id"])
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}/p/{post['id']}"
    assert follow_button(person.get(f"/p/{post['id']}").text) == "Following (pressed=true)"
    assert following(workspace, person, post["id"]) is True
    follow_on_page(person, post["id"])
    assert follow_button(person.get(f"/p/{post['id']}").text) == "Follow (pressed=false)"
    assert following(workspace, person, post["id"]) is False

    # no CSRF proof, or a value that is not a choice: refused before any call
    assert person.post(f"/p/{post['id']}/follow", {"following": "true"}).status_code == 403
    csrf = csrf_of(person.get(f"/p/{post['id']}").text)
    assert person.post(f"/p/{post['id']}/follow", {"csrf": csrf, "following": "maybe"}).status_code == 400
    assert following(workspace, person, post["id"]) is False
    # an anonymous visitor's follow (a form of its own) is told to sign in
    r = site.post(f"/p/{post['id']}/follow", {"csrf": csrf_of(anonymous.text), "following": "true"})
    assert r.status_code == 401 and "Sign in to follow" in r.text


def test_the_preferences_page_saves_each_choice_and_unsubscribes(site, workspace, maildir):
    r = site.get("/account/notifications", allow_redirects=False)
    assert r.status_code == 303
    assert r.headers["Location"] == f"/b/{workspace.slug}/sign-in?next=%2Fb%2F{workspace.slug}%2Faccount%2Fnotifications"

    person = signed_in(site, maildir, address("prefs"))
    account = person.get("/account")
    assert f'href="/b/{workspace.slug}/account/notifications"' in account.text
    page = person.get("/account/notifications")
    assert page.status_code == 200 and 'id="n-statusChanges"' in page.text
    assert 'name="teamActivity"' not in page.text  # an end user has no team activity to pace
    before = preferences(workspace, person)
    assert before["statusChanges"] and before["replies"] and not before["unsubscribed"] and not before["team"]

    # every box but "replies" ticked: replies goes off, the others stay on
    ticked = {c: "1" for c in ("statusChanges", "merges", "changelog", "autoFollow")}
    csrf = form_csrf(page.text, f"/b/{workspace.slug}/account/notifications")
    r = person.post("/account/notifications", {"csrf": csrf, "action": "save", **ticked})
    assert r.status_code == 200 and "Saved." in r.text
    assert 'id="n-replies" type="checkbox" name="replies" value="1"><label' in r.text  # shown unticked
    after = preferences(workspace, person)
    assert after["replies"] is False and after["statusChanges"] and after["merges"] and after["changelog"] and after["autoFollow"]

    r = person.post("/account/notifications", {"csrf": csrf, "action": "unsubscribe"})
    assert r.status_code == 200 and "data-unsubscribed" in r.text and "Resubscribe" in r.text
    assert preferences(workspace, person)["unsubscribed"] is True
    r = person.post("/account/notifications", {"csrf": csrf, "action": "resubscribe"})
    assert "data-unsubscribed" not in r.text and preferences(workspace, person)["unsubscribed"] is False

    # refused before any call: no CSRF proof, an unknown action
    assert person.post("/account/notifications", {"action": "unsubscribe"}).status_code == 403
    assert person.post("/account/notifications", {"csrf": csrf, "action": "mute"}).status_code == 400
    assert preferences(workspace, person)["unsubscribed"] is False


def test_a_team_member_paces_team_activity(site, workspace):
    member = team_member(site.base, workspace, address("pace-owner"))
    page = member.get("/account/notifications")
    assert page.status_code == 200 and 'name="teamActivity"' in page.text
    csrf = csrf_of(page.text)
    r = member.post("/account/notifications", {"csrf": csrf, "action": "save", "statusChanges": "1", "teamActivity": "daily"})
    assert r.status_code == 200 and '<option value="daily" selected>' in r.text
    assert preferences(workspace, member)["teamActivity"] == "daily"
    # a pace the API does not know: the page again, with its message
    r = member.post("/account/notifications", {"csrf": csrf, "action": "save", "teamActivity": "hourly"})
    assert r.status_code == 400 and 'role="alert"' in r.text and 'name="teamActivity"' in r.text
    assert preferences(workspace, member)["teamActivity"] == "daily"


def notified(workspace, site: Visitor, maildir, name: str):
    """A person who follows a post on its page, and the mail a manager's status change sends them."""
    from testkit.mail import wait_for_mail

    email = address(name)
    person = signed_in(site, maildir, email)
    post = create_post(workspace, f"Dark mode for {name}")
    follow_on_page(person, post["id"])
    r = workspace.api.patch(f"{workspace.path}/posts/{post['id']}", key=workspace.key, json={"statusSlug": "planned"})
    assert r.status_code == 200, r.text
    mail = wait_for_mail(maildir, to=email, after=1, timeout=MAIL_SECONDS)  # the first was the sign-in link
    assert "List-Unsubscribe" in mail and mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click", mail
    return person, mail


def test_the_one_click_post_unsubscribes_without_cookie_or_form_token(site, workspace, other_workspace, maildir):
    person, mail = notified(workspace, site, maildir, "one-click")
    link = mail["List-Unsubscribe"].strip("<>")
    assert link.startswith(f"{site.base}/b/{workspace.slug}/unsubscribe?token=")

    # opening the link (a scanner, a preview) changes nothing
    shown = requests.get(link, timeout=30)
    assert shown.status_code == 200 and "Unsubscribe from Acme" in shown.text
    assert preferences(workspace, person)["unsubscribed"] is False
    # the same token on another workspace's board is refused
    token = link.split("token=", 1)[1]
    elsewhere = requests.post(f"{site.base}/b/{other_workspace.slug}/unsubscribe?token={token}",
                              data={"List-Unsubscribe": "One-Click"}, timeout=30)
    assert elsewhere.status_code == 400 and "not valid for this board" in elsewhere.text

    # RFC 8058: the mail provider POSTs "List-Unsubscribe=One-Click" to the header's URL, no cookie
    r = requests.post(link, data="List-Unsubscribe=One-Click", timeout=30, allow_redirects=False,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200 and "You will get no more email from Acme" in r.text
    assert preferences(workspace, person)["unsubscribed"] is True
    assert "data-unsubscribed" in person.get("/account/notifications").text


def test_a_bad_unsubscribe_link_says_so(site, workspace):
    for path in ("/unsubscribe", "/unsubscribe?token=short", "/unsubscribe?token=" + "x" * 40):
        shown = site.get(path)
        posted = requests.post(site.url(path), data={"List-Unsubscribe": "One-Click"}, timeout=30)
        assert posted.status_code == 400 and "not valid for this board" in posted.text, path
        # a GET checks the token's form only: a well-formed forgery is refused when used
        assert shown.status_code == (200 if path.endswith("x" * 40) else 400), path
