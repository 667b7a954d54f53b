"""Team members who chose a digest hear of new posts, posts awaiting moderation and comments in
one mail when it falls due (the scheduler's round, run here at a time two days ahead)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from common.config import load_settings
from common.plugins import load_services
from testkit.api import wait_for

from services.people.tests.helpers import join

from .helpers import Person, body, create_post, mail_to, quiet, wait_for_notification
from notifications.notifier import next_digest


@pytest.fixture(scope="module")
def notifier(stack):
    """The notifications service's notifier, in this process, on the stack's databases and services."""
    return load_services()["notifications"].create_context(load_settings(stack.env())).notifier


def test_a_daily_digest_lists_the_days_activity_in_one_mail(stack, workspace, maildir, notifier):
    workspace.board("features", "Feature requests")
    author = Person(workspace, maildir, "author")
    member_email = f"digest-{author.email}"
    member = join(workspace, member_email)
    r = workspace.api.patch(f"{workspace.path}/me/notifications", key=member["token"], json={"teamActivity": "daily"})
    assert r.status_code == 200 and r.json()["team"] is True
    first = create_post(workspace, author, "Digest one")
    create_post(workspace, author, "Digest two")
    r = author.call("POST", f"/posts/{first['id']}/comments", json={"content": "Me too"})
    assert r.status_code == 201
    items = wait_for(lambda: len(found := list(notifier.repo.digest_items.find({"workspace": workspace.slug}))) == 3 and found,
                     what="three digest lines")
    assert {i["kind"] for i in items} == {"new_post", "new_comment"} and all(i["email"] == member_email for i in items)
    quiet(maildir, [member_email], seconds=0)  # nothing sent at once
    assert notifier.send_digests(datetime.now(timezone.utc)) == 0, "not due yet"
    assert notifier.send_digests(datetime.now(timezone.utc) + timedelta(days=2)) >= 1
    [digest] = wait_for_notification(maildir, member_email, "Digest:")
    assert digest["Subject"].startswith("Digest: 3 updates on")
    assert "Digest one" in body(digest) and "Digest two" in body(digest) and "New comment" in body(digest)
    assert notifier.repo.digest_items.count_documents({"workspace": workspace.slug}) == 0
    notifier.send_digests(datetime.now(timezone.utc) + timedelta(days=2))
    quiet(maildir, [], seconds=1)
    assert len(mail_to(maildir, member_email, "Digest:")) == 1


def test_digests_fall_due_at_the_hour_daily_and_on_mondays_weekly():
    tuesday_noon = datetime(2026, 11, 24, 12, 0, tzinfo=timezone.utc)
    assert next_digest(tuesday_noon, "daily", 8) == datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
    assert next_digest(tuesday_noon, "weekly", 8) == datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)
    early_monday = datetime(2026, 11, 30, 7, 59, tzinfo=timezone.utc)
    assert next_digest(early_monday, "weekly", 8) == datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)
    assert next_digest(early_monday, "daily", 8) == datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)
