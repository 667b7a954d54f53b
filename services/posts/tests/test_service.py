"""The posts service's rules, in process against the real local database: no gateway, no
Kafka, no other service. The workspace comes from a snapshot applied to the read model."""

import dataclasses

import pytest
from bson import ObjectId

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from posts.board import ListQuery

from .helpers import OPERATOR, PERSON_ID, manager, person, user

ANONYMOUS = auth.Caller(kind=auth.ANONYMOUS, user_id="anon:someone")


def post(context, slug, title="A post", caller=None):
    return context.service.create(caller or manager(slug), slug, {"boardSlug": "features", "title": title, "content": "x"})


def test_anonymous_callers_need_the_flag_before_their_body_is_read(context, slug):
    with pytest.raises(Unauthorized):
        context.service.create(ANONYMOUS, slug, {"not": "even valid"})
    with pytest.raises(BadRequest):
        context.service.create(user(slug), slug, {"not": "even valid"})


def test_only_managers_change_merge_and_see_unapproved(context, slug):
    a, b = post(context, slug, "A")["id"], post(context, slug, "B")["id"]
    someone = user(slug)
    with pytest.raises(Forbidden):
        context.service.update(someone, slug, a, {"statusSlug": "planned"})
    with pytest.raises(Forbidden):
        context.merges.merge(someone, slug, a, {"intoPostId": b})
    with pytest.raises(Forbidden):
        context.merges.unmerge(someone, slug, a)
    with pytest.raises(Forbidden):
        context.board.list(someone, slug, ListQuery(moderation="pending"))
    with pytest.raises(Unauthorized):
        context.service.update(ANONYMOUS, slug, a, {})


def test_hidden_posts_are_visible_to_their_author_and_managers_only(context, slug):
    author = user(slug, "author")
    hidden = post(context, slug, "Spam?", caller=author)["id"]
    context.service.update(manager(slug), slug, hidden, {"moderationState": "spam"})
    assert context.service.get(author, slug, hidden)["moderationState"] == "spam"
    with pytest.raises(NotFound):
        context.service.get(user(slug), slug, hidden)
    listed = [p["id"] for p in context.board.list(user(slug), slug, ListQuery())["items"]]
    assert hidden not in listed
    managed = [p["id"] for p in context.board.list(manager(slug), slug, ListQuery(moderation="spam"))["items"]]
    assert managed == [hidden]


def test_private_comments_are_written_and_read_by_managers_only(context, slug):
    pid = post(context, slug)["id"]
    with pytest.raises(Forbidden):
        context.service.comment(user(slug), slug, pid, {"content": "psst", "isPrivate": True})
    context.service.comment(manager(slug), slug, pid, {"content": "team only", "isPrivate": True})
    context.service.comment(user(slug), slug, pid, {"content": "public"})
    assert [c["content"] for c in context.service.comments(user(slug), slug, pid, 100, 0)["items"]] == ["public"]
    assert len(context.service.comments(manager(slug), slug, pid, 100, 0)["items"]) == 2
    assert context.service.get(user(slug), slug, pid)["commentCount"] == 1
    assert context.service.get(manager(slug), slug, pid)["commentCount"] == 2


def test_merge_moves_votes_without_counting_anyone_twice_and_unmerge_restores(context, slug):
    a, b = post(context, slug, "A")["id"], post(context, slug, "B")["id"]
    both, only_a, only_b = user(slug), user(slug), user(slug)
    for voter, target in ((both, a), (both, b), (only_a, a), (only_b, b)):
        context.votes.vote(voter, slug, target)
    merged = context.merges.merge(manager(slug), slug, a, {"intoPostId": b})
    assert merged["mergedInto"]["id"] == b
    assert context.service.get(manager(slug), slug, b)["voteCount"] == 3  # both, only_a, only_b
    with pytest.raises(Conflict):
        context.votes.vote(user(slug), slug, a)
    context.merges.unmerge(manager(slug), slug, a)
    assert context.service.get(manager(slug), slug, a)["voteCount"] == 2
    assert context.service.get(manager(slug), slug, b)["voteCount"] == 2


def test_votes_without_client_bulk_write(context, slug):
    """Servers before MongoDB 8 have no client bulkWrite: one command per write, same outcome."""
    store = context.store
    supported = store.bulk_supported
    store.bulk_supported = False
    try:
        pid = post(context, slug)["id"]
        voters = [user(slug) for _ in range(3)]
        for voter in voters:
            shaped, created = context.votes.vote(voter, slug, pid)
            assert created and shaped["voted"] is True
        shaped, created = context.votes.vote(voters[0], slug, pid)
        assert not created and shaped["voteCount"] == 3
        assert context.votes.unvote(voters[1], slug, pid)["voteCount"] == 2
        assert context.votes.unvote(voters[1], slug, pid)["voteCount"] == 2  # not voted any more
        context.service.comment(voters[0], slug, pid, {"content": "One command per write"})
        assert context.service.get(manager(slug), slug, pid)["commentCount"] == 1
        assert store.bulk_supported is False
    finally:
        store.bulk_supported = supported


def test_anonymous_writes_follow_the_owner_within_the_bound(context, slug, monkeypatch):
    """The flag as the owner last stated it: turned on, anonymous posts are taken; turned off,
    refused, once the last word is older than permission_max_age (0 here: at once)."""
    monkeypatch.setattr(context.access, "config", dataclasses.replace(context.config, permission_max_age=0.0))
    snapshot = context.workspaces.get(slug)

    def anon_submit(on: bool, version: int):
        context.workspaces.apply({"slug": slug, "name": "Unit", "version": version, "boards": list(snapshot.boards),
                                  "statuses": list(snapshot.statuses), "defaultStatus": "open", "anonSubmit": on})

    anon_submit(True, snapshot.version + 1)
    assert post(context, slug, caller=ANONYMOUS)["verified"] is False
    anon_submit(False, snapshot.version + 2)
    with pytest.raises(Unauthorized):
        post(context, slug, caller=ANONYMOUS)


# -- who did it ------------------------------------------------------------------------------


def outbox(context, slug) -> list[tuple[str, dict]]:
    """Every event of ``slug`` in the outbox, oldest first, as (type, data)."""
    docs = context.store.db["outbox"].find({"key": slug}, sort=[("at", 1)])
    return [(d["event"]["type"], d["event"]["data"]) for d in docs]


@pytest.mark.parametrize("who", ["api key", "operator", "person"])
def test_every_change_names_who_made_it(context, slug, who):
    caller, actor = {
        "api key": (auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="k9", name="Zapier"), {"id": "key:k9", "name": "Zapier"}),
        "operator": (OPERATOR, {"id": "operator", "name": "Operator"}),
        "person": (person(slug), {"id": PERSON_ID, "name": "Ada Lovelace"}),
    }[who]
    a, b = post(context, slug, "A", caller)["id"], post(context, slug, "B", caller)["id"]
    context.service.update(caller, slug, a, {"title": "A2", "statusSlug": "planned"})
    context.service.update(caller, slug, a, {"moderationState": "spam"})  # moderation is a post.updated
    context.service.comment(caller, slug, a, {"content": "On it"})
    context.merges.merge(caller, slug, a, {"intoPostId": b})
    context.merges.unmerge(caller, slug, a)
    # A person's new post comes with their vote (authorVotes), whose event names the voter, not an actor.
    created = ["post.created", "vote.created"] if who == "person" else ["post.created"]
    assert [t for t, _ in outbox(context, slug)] == [*created, *created, "post.updated", "post.status_changed", "post.updated",
                                                     "comment.created", "post.merged", "post.unmerged"]
    events = [(t, data) for t, data in outbox(context, slug) if t != "vote.created"]
    assert [data["actor"] for _, data in events] == [actor] * len(events)
    assert [data["changed"] for t, data in events if t == "post.updated"] == [["title"], ["moderationState"]]
    stored = context.service.repo.find_post(slug, ObjectId(a))
    assert stored["statusChangedBy"] == actor and stored["statusChangedAt"] is not None


def test_an_end_users_changes_name_them_and_an_anonymous_visitors_nobody(context, slug, monkeypatch):
    monkeypatch.setattr(context.access, "config", dataclasses.replace(context.config, permission_max_age=0.0))
    snapshot = context.workspaces.get(slug)
    context.workspaces.apply({"slug": slug, "name": "Unit", "version": snapshot.version + 1, "boards": list(snapshot.boards),
                              "statuses": list(snapshot.statuses), "defaultStatus": "open", "anonComment": True})
    someone = auth.Caller(kind=auth.USER, workspace=slug, user_id="sso:u42", name="Grace")
    pid = post(context, slug, "Mine", someone)["id"]
    context.service.comment(someone, slug, pid, {"content": "Please"})
    context.service.comment(ANONYMOUS, slug, pid, {"content": "Me too"})
    events = outbox(context, slug)
    assert [t for t, _ in events] == ["post.created", "vote.created", "comment.created", "comment.created"]  # the author's vote
    assert [data["actor"] for t, data in events if t != "vote.created"] == [{"id": "sso:u42", "name": "Grace"}] * 2 + [None]


def test_a_team_members_comment_shows_their_name_beside_the_badge(context, slug):
    pid = post(context, slug)["id"]
    named_key = auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="k9", name="Zapier")
    other_team = auth.Caller(kind=auth.MANAGER, workspace="elsewhere", user_id="person:0badc0ffee", name="Mallory")
    end_user = auth.Caller(kind=auth.USER, workspace=slug, user_id="person:5eed", name="Eve")
    written = [context.service.comment(c, slug, pid, {"content": f"by {i}"})
               for i, c in enumerate((person(slug), named_key, OPERATOR, end_user, other_team))]
    expected = [(True, "Ada Lovelace"), (True, None), (True, None), (False, None), (False, None)]
    assert [(c["isTeamMember"], c["authorName"]) for c in written] == expected
    listed = context.service.comments(user(slug), slug, pid, 100, 0)["items"]
    assert [(c["isTeamMember"], c["authorName"]) for c in listed] == expected
    assert [data["comment"]["authorName"] for t, data in outbox(context, slug) if t == "comment.created"] == [n for _, n in expected]
