"""The changelog by email, end to end through the real SMTP server: anyone subscribes an
address, gets one confirmation mail (and no second one while pending), confirms on the board's
page, gets each entry published after that (with RFC 8058 one-click headers) until the mail
provider's one-click POST; unconfirmed addresses get nothing, a follower who subscribed too gets
one mail per entry, and a bad address is a JSON 400. Then the parts without a platform: the
address check, the tokens (each for its purpose; the confirmation expires), the hourly cap and
the words an entry's mail quotes."""

from __future__ import annotations

import pytest
import requests

from testkit.api import assert_error, wait_for
from testkit.mail import html_of, link_in, messages

from .helpers import Person, address, body, create_post, raw_header_lines, wait_for_notification

SUBSCRIPTIONS = "/changelog/subscriptions"


def to(maildir, email: str, subject_part: str = "") -> list:
    return [m for m in messages(maildir) if m["To"].addresses[0].addr_spec == email and subject_part in str(m["Subject"])]


def wait_for_mail_to(maildir, email: str, subject_part: str, count: int = 1) -> list:
    return wait_for(lambda: (found := to(maildir, email, subject_part)) and len(found) >= count and found,
                    timeout=30, what=f"{count} mail(s) '{subject_part}' to {email}")


def publish(ws, title: str, post_ids: tuple[str, ...] = (), content: str = "") -> dict:
    slug = title.lower().replace(" ", "-")
    r = ws.api.post(f"{ws.path}/changelogs", key=ws.key, json={
        "title": title, "slug": slug, "content": content or f"**{title}** is out: see what changed.",
        "postIds": list(post_ids), "publish": True})
    assert r.status_code == 201, r.text
    return r.json()


def subscribers(ws) -> dict:
    r = ws.api.get(f"{ws.path}{SUBSCRIPTIONS}", key=ws.key)
    assert r.status_code == 200, r.text
    return r.json()


def test_double_opt_in_then_each_entry_once_until_the_one_click_unsubscribe(workspace, maildir):
    ws = workspace
    ws.board("features", "Feature requests")
    site = ws.api.base[:-3]
    reader = address("reader")

    # Anyone (no sign-in) asks; the answer is the same for a new and a pending address.
    first = ws.api.post(f"{ws.path}{SUBSCRIPTIONS}", json={"email": reader.upper()})
    assert first.status_code == 202, first.text
    again = ws.api.post(f"{ws.path}{SUBSCRIPTIONS}", json={"email": reader})
    assert again.status_code == 202 and again.json() == first.json() and first.json()["email"] == reader
    [confirmation] = wait_for_mail_to(maildir, reader, "Confirm your subscription")
    assert "List-Unsubscribe" not in confirmation and html_of(confirmation)
    assert subscribers(ws)["pending"] == 1 and subscribers(ws)["confirmed"] == 0

    # A signed-in person subscribes their own address in one step, and votes for a post: the
    # entry that ships it reaches them once (as a voter), not again as a subscriber.
    voter = Person(ws, maildir, "voter")
    r = voter.call("PUT", "/me/changelog-subscription", json={"subscribed": True})
    assert r.status_code == 200 and r.json() == {"workspace": ws.slug, "email": voter.email, "subscribed": True}, r.text
    post = create_post(ws, None, "Dark mode")
    assert voter.call("POST", f"/posts/{post['id']}/vote").status_code in (200, 201)

    # Published while the reader is pending: nothing for them; the voter hears of it once.
    publish(ws, "Dark mode ships", (post["id"],))
    wait_for_notification(maildir, voter.email, "Shipped: Dark mode")

    # The confirmation link: opening it (a mail scanner) changes nothing; its button confirms.
    link = link_in(confirmation, f"{site}/b/{ws.slug}/changelog/confirm?token=")
    shown = requests.get(link, timeout=30)
    assert shown.status_code == 200 and "Confirm my subscription" in shown.text
    assert subscribers(ws)["confirmed"] == 1, "only the voter"
    done = requests.post(link, timeout=30)
    assert done.status_code == 200 and "Subscribed" in done.text, done.text
    listed = subscribers(ws)
    assert listed["confirmed"] == 2 and listed["pending"] == 0
    assert {i["email"]: i["state"] for i in listed["items"]} == {reader: "confirmed", voter.email: "confirmed"}
    # Confirmed: asking again sends nothing and answers the same.
    assert ws.api.post(f"{ws.path}{SUBSCRIPTIONS}", json={"email": reader}).json() == first.json()

    entry = publish(ws, "Faster exports", content="# Exports\n\nExports are **ten times** faster, see [the docs](https://example.com).")
    [message] = wait_for_mail_to(maildir, reader, "Faster exports")
    [to_voter] = wait_for_mail_to(maildir, voter.email, "Faster exports")
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    leave = message["List-Unsubscribe"].strip("<>")
    assert leave.startswith(f"{site}/b/{ws.slug}/changelog/unsubscribe?token=")
    assert f"List-Unsubscribe: <{leave}>".encode() in raw_header_lines(maildir, message)
    text = body(message)
    assert "Exports are ten times faster, see the docs." in text and f"/b/{ws.slug}/changelog#{entry['slug']}" in text
    assert leave in text and leave.replace("&", "&amp;") in html_of(message)
    assert len(to(maildir, reader, "Dark mode ships")) == 0, "published before the confirmation"
    assert len(to(maildir, voter.email, "Dark mode ships")) == 0, "the voter had the shipped mail, not a second one"
    assert len(to(maildir, voter.email, "Shipped: Dark mode")) == 1

    # RFC 8058: the mail provider POSTs to the header's URL, without cookie or form token.
    r = requests.post(leave, data="List-Unsubscribe=One-Click", timeout=30, allow_redirects=False,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200 and "Unsubscribed" in r.text, r.text
    assert subscribers(ws)["confirmed"] == 1

    # The next entry reaches the voter (still subscribed), and nothing more reaches the reader.
    publish(ws, "Calendar sync")
    wait_for_mail_to(maildir, voter.email, "Calendar sync")
    assert to(maildir, reader, "Calendar sync") == []
    assert len(to(maildir, reader, "Confirm your subscription")) == 1, "one confirmation mail while pending"
    assert len(to(maildir, reader)) == 2, [m["Subject"] for m in to(maildir, reader)]


def test_refusals_are_json_errors(workspace, other_workspace):
    ws = workspace
    for email in ("not-an-address", "Ann <ann@example.com>", "two@example.com, three@example.com", "x" * 250 + "@example.com"):
        assert_error(ws.api.post(f"{ws.path}{SUBSCRIPTIONS}", json={"email": email}), 400)
    assert_error(ws.api.post(f"{ws.path}{SUBSCRIPTIONS}", json={}), 400)
    assert_error(ws.api.post(f"/workspaces/no-such-workspace{SUBSCRIPTIONS}", json={"email": address()}), 404)
    for action in ("confirm", "unsubscribe"):
        assert_error(ws.api.post(f"{ws.path}{SUBSCRIPTIONS}/{action}", json={"token": "x" * 40}), 400)
    # The list is the team's: nobody else reads the addresses.
    assert_error(ws.api.get(f"{ws.path}{SUBSCRIPTIONS}"), 401)
    assert_error(ws.api.get(f"{ws.path}{SUBSCRIPTIONS}", key=other_workspace.key), 403)
    assert_error(ws.api.get(f"{ws.path}/me/changelog-subscription"), 401)


# -- the parts, without a platform -------------------------------------------------------------

SECRET = "a-secret-long-enough-for-the-tokens-of-the-tests"


def test_an_address_is_one_plain_address_kept_in_lower_case():
    from common.errors import BadRequest
    from notifications.subscriptions import address_of

    assert address_of("Ann.Lee@Example.COM") == "ann.lee@example.com"
    for bad in ("Ann <ann@example.com>", "ann@example.com, bob@example.com", "ann@localhost", "ann@@example.com", "a b@example.com"):
        with pytest.raises(BadRequest):
            address_of(bad)


def test_each_token_serves_its_purpose_only_and_the_confirmation_expires(monkeypatch):
    import itsdangerous.timed

    from notifications.tokens import SubscriptionTokens, UnsubscribeTokens

    tokens = SubscriptionTokens(SECRET, confirm_seconds=7 * 86400)
    confirm, leave = tokens.confirm("acme", "ann@example.com", "n1"), tokens.unsubscribe("acme", "ann@example.com")
    assert tokens.read_confirm(confirm) == ("acme", "ann@example.com", "n1")
    assert tokens.read_unsubscribe(leave) == ("acme", "ann@example.com")
    # A token of one purpose is worthless for another, and a forged one for any.
    assert tokens.read_confirm(leave) is None and tokens.read_unsubscribe(confirm) is None
    assert UnsubscribeTokens(SECRET).read(leave) is None
    assert SubscriptionTokens("another-secret-of-the-same-length-for-tests", 60).read_unsubscribe(leave) is None
    assert tokens.read_confirm(confirm[:-2] + ("AA" if not confirm.endswith("AA") else "BB")) is None
    # Made eight days ago: the confirmation link has expired; an unsubscribe link never does.
    real = itsdangerous.timed.time.time()
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: real - 8 * 86400)
    old_confirm, old_leave = tokens.confirm("acme", "ann@example.com", "n1"), tokens.unsubscribe("acme", "ann@example.com")
    monkeypatch.undo()
    assert tokens.read_confirm(old_confirm) is None and tokens.read_unsubscribe(old_leave) == ("acme", "ann@example.com")


def test_a_workspace_past_its_hourly_confirmations_is_refused_before_anything_is_kept():
    from types import SimpleNamespace

    from common.errors import TooManyRequests
    from notifications.config import NotificationsConfig
    from notifications.subscriptions import ChangelogSubscriptions

    kept = []
    repo = SimpleNamespace(confirmations_since=lambda slug, since: 300, add_pending=lambda *a: kept.append(a))
    workspaces = SimpleNamespace(require=lambda slug: None)
    service = ChangelogSubscriptions(repo, None, workspaces, None, None, NotificationsConfig(confirmations_per_hour=300))
    with pytest.raises(TooManyRequests):
        service.subscribe("acme", {"email": "ann@example.com"})
    assert kept == []


def test_the_entry_mail_quotes_the_words_of_its_markdown():
    from notifications.subscriptions import plain

    assert plain("## New\n\n- **Bold** `code` and [a link](https://example.com)\n> quoted ![logo](https://x/l.png)") == \
        "New Bold code and a link quoted logo"
