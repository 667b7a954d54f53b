"""A member removed from a team hears nothing more of it as a member: not the digest lines
queued for them before the removal (the removal's event withdraws them, and the scheduler asks
the team again when a digest falls due, so a line queued from a team read made before the
removal is not sent either), not team mail still queued (a send waiting for its retry after an
SMTP failure), nor team mail of what happens after (docs/services/notifications.md, "Members who
leave the team")."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from common.config import load_settings
from common.mail import MailQueue
from common.plugins import load_services
from notifications import mail
from testkit.api import wait_for

from services.people.tests.helpers import join

from .helpers import address, body, create_post, wait_for_notification


@pytest.fixture(scope="module")
def notifier(stack):
    """The notifications service's notifier, in this process, on the stack's databases and services."""
    return load_services()["notifications"].create_context(load_settings(stack.env())).notifier


@dataclass
class Member:
    email: str
    token: str
    person: str  # person:<id>


def member(ws, name: str, pace: str) -> Member:
    """A manager who joined ``ws``'s team and hears of its activity at ``pace``."""
    email = address(name)
    session = join(ws, email)
    r = ws.api.patch(f"{ws.path}/me/notifications", key=session["token"], json={"teamActivity": pace})
    assert r.status_code == 200 and r.json()["team"] is True, r.text
    return Member(email, session["token"], session["user"]["id"])


def remove(ws, who: Member) -> None:
    r = ws.api.delete(f"{ws.path}/members/{who.person.removeprefix('person:')}", key=ws.key)
    assert r.status_code == 204, r.text


def queued_to(notifier, email: str) -> list[dict]:
    """Every message of the notifications service's queue to ``email``, whatever its state."""
    return list(notifier.queue.collection.find({"to": email}, projection={"subject": 1, "key": 1, "state": 1}))


def test_digest_lines_queued_before_a_removal_are_never_sent(workspace, maildir, notifier):
    workspace.board("features", "Feature requests")
    stays, leaves = member(workspace, "stays", "daily"), member(workspace, "leaves", "daily")
    create_post(workspace, title="Before the removal")
    lines = notifier.repo.digest_items
    wait_for(lambda: lines.count_documents({"workspace": workspace.slug}) == 2, what="a digest line for each member")

    remove(workspace, leaves)
    wait_for(lambda: lines.count_documents({"workspace": workspace.slug, "personId": leaves.person}) == 0,
             timeout=30, what="the removed member's digest lines withdrawn")
    # A line queued after the withdrawal from a team read made before the removal (an event
    # handled meanwhile): the scheduler asks the team again when the digest falls due.
    at = datetime.now(timezone.utc)
    notifier.repo.add_digest_items([{"workspace": workspace.slug, "personId": leaves.person, "email": leaves.email,
                                     "kind": "new_comment", "postId": "0" * 24, "title": "Queued late", "eventId": uuid.uuid4().hex,
                                     "at": at, "dueAt": at}])

    assert notifier.send_digests(at + timedelta(days=2)) >= 2
    [digest] = wait_for_notification(maildir, stays.email, "Digest:")
    assert "Before the removal" in body(digest)
    assert queued_to(notifier, leaves.email) == [], "nothing was even queued for the removed member"
    assert lines.count_documents({"workspace": workspace.slug}) == 0, "every line went, sent or not"


def test_team_mail_still_queued_for_a_removed_member_is_withdrawn(workspace, notifier):
    leaves = member(workspace, "leaves", "instant")
    board = notifier.directory.board(workspace.slug)
    later = datetime.now(timezone.utc) + timedelta(hours=1)  # a send that failed, waiting for its retry

    def held(letter: mail.Letter, key: str) -> dict:
        # The message as the queue stores it, due only later.
        document = MailQueue._document(notifier.addresser.message(board, letter, leaves.person, leaves.email), key)
        notifier.queue.collection.insert_one({**document, "dueAt": later})
        return document

    post = {"_id": "0" * 24, "title": "Pricing page"}
    team = held(mail.team_activity(board, "new_comment", post, "A private remark"), f"team:{uuid.uuid4().hex}:{leaves.person}")
    digest = held(mail.digest(board, [{"kind": "new_post", "title": "Pricing page", "postId": "0" * 24}]),
                  f"digest:{workspace.slug}:{uuid.uuid4().hex}:{leaves.person}")
    reply = held(mail.reply(board, post, {"content": "Thanks", "isTeamMember": True}, None, to_your_comment=True),
                 f"reply:{uuid.uuid4().hex}:{leaves.person}")
    try:
        remove(workspace, leaves)
        wait_for(lambda: {m["key"] for m in queued_to(notifier, leaves.email)} == {reply["key"]}, timeout=30,
                 what=f"{team['key']} and {digest['key']} withdrawn, the reply to their own comment kept")
    finally:
        notifier.queue.collection.delete_many({"to": leaves.email})


def test_no_team_mail_of_what_happens_after_a_removal(workspace, maildir, notifier):
    workspace.board("features", "Feature requests")
    stays, leaves = member(workspace, "stays", "instant"), member(workspace, "leaves", "instant")
    remove(workspace, leaves)
    post = create_post(workspace, title="After the removal")
    r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", key=workspace.key,
                           json={"content": "Internal: this one is on the Q3 plan", "isPrivate": True})
    assert r.status_code == 201, r.text
    wait_for_notification(maildir, stays.email, "New comment")
    assert queued_to(notifier, leaves.email) == []
