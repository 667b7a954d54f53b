"""A new post's author is its first voter (issue 36; Canny and Fider count them too): with the
workspace's ``authorVotes`` on (the default), ``POST /posts`` by a person (an SSO user, a person
with a session) records their vote in the post's own unit of work, as ``POST .../vote`` would
have (count, revenue, score, the ``vote.created`` event). Anonymous visitors and keys that are
their own identity (a manager key, the operator, a write key's agent) cast none.
"""

import dataclasses
import uuid

import pytest
from bson import ObjectId

from common import auth
from testkit import wait_for

from .helpers import OPERATOR, manager, person, published, user

ANONYMOUS = auth.Caller(kind=auth.ANONYMOUS, user_id="anon:author")
BODY = {"boardSlug": "features", "title": "Export to CSV", "content": "Please"}


def write_key(slug: str) -> auth.Caller:
    """A write key's caller: an identified agent of its workspace (its own user id)."""
    return auth.Caller(kind=auth.USER, workspace=slug, user_id="agent:kw1", key_id="kw1", name="Helpdesk", role=auth.WRITE_KEY)


def end_user_person(slug: str) -> auth.Caller:
    """An end user signed in with a session (the people service): a person who is not the team."""
    return auth.Caller(kind=auth.USER, workspace=slug, user_id=f"person:{uuid.uuid4().hex[:24]}", name="Pat", session_id="s1")


def outbox(context, slug) -> list[tuple[str, dict]]:
    docs = context.store.db["outbox"].find({"key": slug}, sort=[("at", 1)])
    return [(d["event"]["type"], d["event"]["data"]) for d in docs]


def set_snapshot(context, slug, **flags) -> None:
    """The workspace's snapshot again, one version on, with these flags."""
    now = context.workspaces.get(slug)
    context.workspaces.apply({"slug": slug, "name": "Unit", "version": now.version + 1, "boards": list(now.boards),
                              "statuses": list(now.statuses), "defaultStatus": now.default_status, **flags})


# -- in process -----------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["sso user", "team member with a session", "end user with a session"])
def test_an_identified_author_is_the_first_voter_in_the_posts_own_unit_of_work(context, slug, who):
    caller = {"sso user": user(slug), "team member with a session": person(slug), "end user with a session": end_user_person(slug)}[who]
    created = context.service.create(caller, slug, BODY)
    assert (created["voteCount"], created["voted"]) == (1, True)
    pid = created["id"]
    vote = context.service.repo.vote_of(pid, caller.user_id)
    assert vote is not None and vote["countsFor"] == pid and vote.get("name") == caller.name
    assert [t for t, _ in outbox(context, slug)] == ["post.created", "vote.created"]
    (_, post_created), (_, vote_created) = outbox(context, slug)
    assert post_created["post"]["voteCount"] == 1
    assert vote_created == {"postId": pid, "userId": caller.user_id, "voteCount": 1}
    # Stored as a vote like any other: read back, counted for the post, and voting again changes nothing.
    assert context.service.get(caller, slug, pid)["voted"] is True
    assert [v["userId"] for v in context.service.repo.counted_votes(pid, 50, 0)] == [caller.user_id]
    again, fresh = context.votes.vote(caller, slug, pid)
    assert (again["voteCount"], fresh) == (1, False)
    assert context.votes.unvote(caller, slug, pid)["voteCount"] == 0


@pytest.mark.parametrize("who", ["anonymous visitor", "manager key", "operator", "write key"])
def test_an_author_who_is_not_a_person_casts_no_vote(context, slug, who, monkeypatch):
    """A write key is an integration (a helpdesk, an importer) submitting what customers asked
    for: its own vote would count nobody; it votes for a person with POST .../votes."""
    if who == "anonymous visitor":
        monkeypatch.setattr(context.access, "config", dataclasses.replace(context.config, permission_max_age=0.0))
        set_snapshot(context, slug, anonSubmit=True)
    caller = {"anonymous visitor": ANONYMOUS, "manager key": manager(slug), "operator": OPERATOR, "write key": write_key(slug)}[who]
    created = context.service.create(caller, slug, BODY)
    assert (created["voteCount"], created["voted"]) == (0, False)
    assert [t for t, _ in outbox(context, slug)] == ["post.created"]
    assert context.service.repo.counted_votes(created["id"], 50, 0) == []


def test_with_author_votes_off_the_author_casts_no_vote(context, slug):
    set_snapshot(context, slug, authorVotes=False)
    created = context.service.create(user(slug), slug, BODY)
    assert (created["voteCount"], created["voted"]) == (0, False)
    assert [t for t, _ in outbox(context, slug)] == ["post.created"]
    set_snapshot(context, slug, authorVotes=True)
    assert context.service.create(user(slug), slug, BODY)["voteCount"] == 1


def test_the_authors_vote_brings_their_companys_revenue_and_moves_the_score(context, slug):
    buyer = user(slug, f"buyer-{uuid.uuid4().hex[:6]}")
    context.revenue.company_updated(slug, "acme", 420_000, "Acme")
    context.revenue.membership_changed(slug, buyer.user_id, ["acme"])
    context.service.save_triage(manager(slug), slug, {"tags": [], "fields": [], "scoreFormula": "votes * 10 + revenue"})
    pid = context.service.create(buyer, slug, BODY)["id"]
    seen = context.service.get(manager(slug), slug, pid)
    assert (seen["voteCount"], seen["revenue"], seen["score"]) == (1, 4200, 4210)
    stored = context.service.repo.find_post(slug, ObjectId(pid))
    assert context.service.repo.post_companies(pid) == {"acme": 1}
    assert stored["revenueCents"] == 420_000
    # A second voter of the same company adds no revenue: the author's vote counted it already.
    colleague = user(slug, f"colleague-{uuid.uuid4().hex[:6]}")
    context.revenue.membership_changed(slug, colleague.user_id, ["acme"])
    context.votes.vote(colleague, slug, pid)
    seen = context.service.get(manager(slug), slug, pid)
    assert (seen["voteCount"], seen["revenue"], seen["score"]) == (2, 4200, 4220)


# -- through the platform -------------------------------------------------------------------------


def test_a_signed_in_author_votes_for_their_post_through_the_platform(board, stack):
    author = board.user("author")
    r = board.api.post(board.path, user=author, json={"boardSlug": "features", "title": "Dark mode", "content": ""})
    assert r.status_code == 201, r.text
    post = r.json()
    assert (post["voteCount"], post["voted"]) == (1, True)
    votes = board.api.get(f"{board.path}/{post['id']}/votes", key=board.ws.key).json()["items"]
    assert [v["userId"] for v in votes] == ["sso:author"]
    assert board.vote(post["id"], user=author).status_code == 200, "the author has voted already"
    assert board.vote(post["id"], user=board.user()).json()["voteCount"] == 2
    by_type = published(stack, board.ws.slug, {"post.created", "vote.created"})
    assert by_type["post.created"][0]["post"]["voteCount"] == 1
    assert {"postId": post["id"], "userId": "sso:author", "voteCount": 1} in by_type["vote.created"]
    # A post by the team's manager key (no user behind it) has no author's vote.
    assert board.post("By the key")["voteCount"] == 0

    assert board.ws.settings(authorVotes=False)["authorVotes"] is False

    def unvoted_post():
        r = board.api.post(board.path, user=author, json={"boardSlug": "features", "title": "Later", "content": ""})
        assert r.status_code == 201, r.text
        return r.json() if r.json()["voteCount"] == 0 else None

    later = wait_for(unvoted_post, what="authorVotes off to reach the posts read model")
    assert later["voted"] is False
