"""Each kind of notification, end to end: an event in the API, the mail in a real SMTP
server's Maildir, parsed back with Python's ``email`` package."""

from __future__ import annotations

import pytest

from testkit.api import assert_error

from .helpers import (Person, body, create_post, mail_to, quiet, raw_header_lines, set_status, unsubscribe_link,
                      wait_for_notification)


@pytest.fixture
def ws(workspace):
    workspace.board("features", "Feature requests")
    return workspace


def test_a_status_change_mails_each_follower_once_with_one_click_unsubscribe(ws, maildir):
    author, voter, bystander = Person(ws, maildir, "author"), Person(ws, maildir, "voter"), Person(ws, maildir, "bystander")
    post = create_post(ws, author, "Dark mode")
    assert voter.call("POST", f"/posts/{post['id']}/vote").status_code in (200, 201)
    set_status(ws, post["id"], "in-progress")
    for person in (author, voter):
        [message] = wait_for_notification(maildir, person.email, "is now In progress")
        assert message["Subject"] == "Dark mode is now In progress"
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        link = unsubscribe_link(message)
        assert link.startswith(f"{ws.api.base[:-3]}/b/{ws.slug}/unsubscribe?token=")
        # As sent: the plain URL a mail provider reads (RFC 2369, RFC 8058), not RFC 2047-encoded.
        assert f"List-Unsubscribe: <{link}>".encode() in raw_header_lines(maildir, message)
        assert f"/b/{ws.slug}/p/{post['id']}" in body(message) and "/account/notifications" in body(message)
        assert message.get_body(preferencelist=("html",)) is not None and message["Auto-Submitted"] == "auto-generated"
    quiet(maildir, [bystander.email], seconds=0)


def test_a_silent_status_change_mails_nobody_and_quick_changes_fold_into_one_follow_up(ws, maildir):
    author = Person(ws, maildir, "author")
    post = create_post(ws, author, "Exports")
    set_status(ws, post["id"], "planned", notify=False)
    set_status(ws, post["id"], "in-progress")
    [first] = wait_for_notification(maildir, author.email, "Exports is now")
    assert first["Subject"] == "Exports is now In progress", "the silent change was not mailed"
    # Two more changes within the fold window: held, then one follow-up naming the last.
    set_status(ws, post["id"], "complete")
    set_status(ws, post["id"], "closed")
    messages = wait_for_notification(maildir, author.email, "Exports is now", count=2)
    assert [m["Subject"] for m in messages] == ["Exports is now In progress", "Exports is now Closed"]
    assert "it was In progress" in body(messages[1])
    quiet(maildir, [], seconds=4)
    assert len(mail_to(maildir, author.email, "Exports is now")) == 2, "the held changes were folded into one mail"


def test_one_click_unsubscribe_stops_every_mail_of_the_workspace(ws, maildir):
    leaver, stayer = Person(ws, maildir, "leaver"), Person(ws, maildir, "stayer")
    post = create_post(ws, None, "Calendar sync")
    for person in (leaver, stayer):
        assert person.call("POST", f"/posts/{post['id']}/vote").status_code in (200, 201)
    set_status(ws, post["id"], "planned")
    [message] = wait_for_notification(maildir, leaver.email, "Calendar sync")
    token = unsubscribe_link(message).split("token=", 1)[1]
    assert_error(ws.api.post(f"{ws.path}/notifications/unsubscribe", json={"token": token[:-3] + "abc"}), 400)
    r = ws.api.post(f"{ws.path}/notifications/unsubscribe", json={"token": token})  # no sign-in
    assert r.status_code == 200 and r.json() == {"workspace": ws.slug, "unsubscribed": True}
    assert leaver.call("GET", "/me/notifications").json()["unsubscribed"] is True
    r = ws.api.post(f"{ws.path}/changelogs", key=ws.key,
                    json={"title": "Calendar", "slug": "calendar", "content": "Shipped", "postIds": [post["id"]], "publish": True})
    assert r.status_code == 201, r.text
    set_status(ws, post["id"], "complete")
    wait_for_notification(maildir, stayer.email, "Calendar sync", count=2)
    assert len(mail_to(maildir, leaver.email)) == 1, "nothing more after the unsubscribe"


def test_a_team_reply_reaches_followers_and_a_reply_reaches_the_comment_author(ws, maildir):
    from services.people.tests.helpers import join

    author, commenter = Person(ws, maildir, "author"), Person(ws, maildir, "commenter")
    manager_email = f"manager-{author.email}"
    manager = join(ws, manager_email)
    assert ws.api.patch(f"{ws.path}/me/notifications", key=manager["token"], json={"teamActivity": "off"}).status_code == 200
    post = create_post(ws, author, "Offline mode")
    r = commenter.call("POST", f"/posts/{post['id']}/comments", json={"content": "Needed on trains"})
    assert r.status_code == 201, r.text
    comment = r.json()
    r = ws.api.post(f"{ws.path}/posts/{post['id']}/comments", key=manager["token"],
                    json={"content": "We are looking into it", "parentId": comment["id"]})
    assert r.status_code == 201, r.text
    [to_commenter] = wait_for_notification(maildir, commenter.email, "New reply")
    assert "replied to your comment" in body(to_commenter) and "We are looking into it" in body(to_commenter)
    [to_author] = wait_for_notification(maildir, author.email, "New reply")
    assert "replied on" in body(to_author)
    quiet(maildir, [manager_email], seconds=0)


def test_a_private_comment_reaches_the_team_and_no_end_user(ws, maildir):
    from services.people.tests.helpers import join

    author = Person(ws, maildir, "author")
    member_email = f"member-{author.email}"
    join(ws, member_email)
    post = create_post(ws, author, "SAML")
    wait_for_notification(maildir, member_email, "New post: SAML")
    r = ws.api.post(f"{ws.path}/posts/{post['id']}/comments", key=ws.key,
                    json={"content": "Internal: customer X pays for this", "isPrivate": True})
    assert r.status_code == 201, r.text
    [team_mail] = wait_for_notification(maildir, member_email, "New comment: SAML")
    assert "customer X" in body(team_mail)
    set_status(ws, post["id"], "planned")  # a later event that does reach the author
    wait_for_notification(maildir, author.email, "SAML is now Planned")
    assert not any("customer X" in body(m) for m in mail_to(maildir, author.email)), "a private comment never reaches an end user"


def test_a_hidden_post_is_never_named_to_its_end_users_but_the_team_hears_it_awaits_moderation(ws, maildir):
    from services.people.tests.helpers import join

    author = Person(ws, maildir, "author")
    member_email = f"member-{author.email}"
    join(ws, member_email)
    post = create_post(ws, author, "Spammy offer")
    r = ws.api.patch(f"{ws.path}/posts/{post['id']}", key=ws.key, json={"moderationState": "spam"})
    assert r.status_code == 200, r.text
    set_status(ws, post["id"], "planned")
    other = create_post(ws, author, "A real request")
    set_status(ws, other["id"], "planned")
    wait_for_notification(maildir, author.email, "A real request is now Planned")
    assert not any("Spammy" in str(m["Subject"]) or "Spammy" in body(m) for m in mail_to(maildir, author.email))


def test_a_merge_tells_the_followers_and_they_follow_the_canonical_post(ws, maildir):
    voter = Person(ws, maildir, "voter")
    duplicate, canonical = create_post(ws, None, "Darker theme"), create_post(ws, None, "Dark mode")
    assert voter.call("POST", f"/posts/{duplicate['id']}/vote").status_code in (200, 201)
    r = ws.api.post(f"{ws.path}/posts/{duplicate['id']}/merge", key=ws.key, json={"intoPostId": canonical["id"]})
    assert r.status_code == 200, r.text
    [merged] = wait_for_notification(maildir, voter.email, "was merged into")
    assert merged["Subject"] == "Darker theme was merged into Dark mode" and f"/p/{canonical['id']}" in body(merged)
    assert voter.call("GET", f"/posts/{canonical['id']}/follow").json() == {"postId": canonical["id"], "following": True}
    set_status(ws, canonical["id"], "planned")
    wait_for_notification(maildir, voter.email, "Dark mode is now Planned")


def test_a_changelog_that_ships_several_followed_posts_is_one_mail_listing_them(ws, maildir):
    voter, other = Person(ws, maildir, "voter"), Person(ws, maildir, "other")
    posts = [create_post(ws, None, f"Request {n}") for n in range(3)]
    for post in posts:
        assert voter.call("POST", f"/posts/{post['id']}/vote").status_code in (200, 201)
    assert other.call("POST", f"/posts/{posts[0]['id']}/vote").status_code in (200, 201)
    r = ws.api.post(f"{ws.path}/changelogs", key=ws.key,
                    json={"title": "Spring release", "slug": "spring", "content": "Lots", "postIds": [p["id"] for p in posts]})
    assert r.status_code == 201, r.text
    r = ws.api.patch(f"{ws.path}/changelogs/{r.json()['id']}", key=ws.key, json={"publish": True})
    assert r.status_code == 200, r.text
    [mine] = wait_for_notification(maildir, voter.email, "Shipped")
    assert mine["Subject"] == "Shipped: 3 posts you follow" and all(f"Request {n}" in body(mine) for n in range(3))
    [theirs] = wait_for_notification(maildir, other.email, "Shipped")
    assert theirs["Subject"] == "Shipped: Request 0" and "Request 1" not in body(theirs)
    quiet(maildir, [], seconds=2)
    assert len(mail_to(maildir, voter.email, "Shipped")) == 1


def test_following_is_a_signed_in_persons_choice_and_an_unfollow_sticks(ws, maildir):
    reader = Person(ws, maildir, "reader")
    post = create_post(ws, None, "Webhooks retries")
    path = f"{ws.path}/posts/{post['id']}/follow"
    assert_error(ws.api.get(path), 401)
    assert_error(ws.api.put(path, key=ws.key, json={"following": True}), 403)
    assert_error(reader.call("PUT", f"/posts/{post['id']}/follow", json={"following": "yes"}), 400)
    assert_error(reader.call("GET", "/posts/0123456789abcdef01234567/follow"), 404)
    assert reader.call("GET", f"/posts/{post['id']}/follow").json() == {"postId": post["id"], "following": False}
    assert reader.call("PUT", f"/posts/{post['id']}/follow", json={"following": False}).json()["following"] is False
    assert reader.call("POST", f"/posts/{post['id']}/vote").status_code in (200, 201)
    set_status(ws, post["id"], "planned")
    other = create_post(ws, reader, "Another")
    set_status(ws, other["id"], "planned")
    wait_for_notification(maildir, reader.email, "Another is now Planned")
    assert mail_to(maildir, reader.email, "Webhooks retries") == [], "the vote did not undo the unfollow"


def test_preferences_are_checked_and_turn_kinds_off(ws, maildir):
    reader = Person(ws, maildir, "reader")
    assert_error(reader.call("PATCH", "/me/notifications", json={"teamActivity": "hourly"}), 400)
    assert_error(reader.call("PATCH", "/me/notifications", json={"statusChanges": False, "extra": 1}), 400)
    assert_error(ws.api.get(f"{ws.path}/me/notifications"), 401)
    prefs = reader.call("PATCH", "/me/notifications", json={"statusChanges": False}).json()
    assert prefs["statusChanges"] is False and prefs["replies"] is True and prefs["team"] is False
    post = create_post(ws, reader, "Quiet please")
    set_status(ws, post["id"], "planned")
    r = ws.api.post(f"{ws.path}/posts/{post['id']}/comments", key=ws.key, json={"content": "Thanks!"})
    assert r.status_code == 201
    [reply] = wait_for_notification(maildir, reader.email, "New reply")
    assert mail_to(maildir, reader.email, "is now") == [], "status changes are off"
