"""Who wrote what (issue 37): a post and a comment keep their author's name and avatar as the
sign-in gave them (a person's session, an SSO token), and show them as ``author``; a workspace
with ``hideCustomerNames`` hides end users' names from other end users (the team, and each
person for their own, still see them); a team member's name shows to everyone; an API key, the
operator and an anonymous visitor leave no author. Events carry the author to the team's
receivers."""

import dataclasses

from common import auth

from .helpers import OPERATOR, manager, person, user
from .test_author_votes import ANONYMOUS, BODY, outbox, set_snapshot

AVATAR = "https://cdn.example.com/ada.png"


def customer(slug: str, name: str) -> auth.Caller:
    """An SSO user whose token gives a name and an avatar."""
    return dataclasses.replace(user(slug), name=name, avatar_url=AVATAR)


def test_a_post_and_a_comment_show_who_wrote_them(context, slug):
    author = customer(slug, "Grace Hopper")
    created = context.service.create(author, slug, BODY)
    assert created["author"] == {"name": "Grace Hopper", "avatarUrl": AVATAR, "isTeamMember": False}
    pid = created["id"]
    other = user(slug, "Someone Else")
    assert context.service.get(other, slug, pid)["author"]["name"] == "Grace Hopper"
    assert context.service.get(ANONYMOUS, slug, pid)["author"]["name"] == "Grace Hopper"
    reply = context.service.comment(person(slug, "Ada Lovelace"), slug, pid, {"content": "On the roadmap"})
    assert reply["author"] == {"name": "Ada Lovelace", "avatarUrl": None, "isTeamMember": True}
    listed = context.board.list(other, slug, _query())["items"]
    assert next(p for p in listed if p["id"] == pid)["author"]["name"] == "Grace Hopper"
    # The team's receivers hear who wrote it.
    events = dict(outbox(context, slug))
    assert events["post.created"]["post"]["author"]["name"] == "Grace Hopper"
    assert events["comment.created"]["comment"]["author"]["name"] == "Ada Lovelace"


def test_keys_the_operator_and_anonymous_visitors_leave_no_author(context, slug):
    for caller in (manager(slug), OPERATOR):
        assert context.service.create(caller, slug, BODY)["author"] is None
    set_snapshot(context, slug, anonSubmit=True)
    assert context.service.create(ANONYMOUS, slug, BODY)["author"] is None


def test_hidden_names_are_hidden_from_other_end_users_only(context, slug):
    set_snapshot(context, slug, hideCustomerNames=True)
    author = customer(slug, "Grace Hopper")
    pid = context.service.create(author, slug, BODY)["id"]
    context.service.comment(author, slug, pid, {"content": "Me too"})
    context.service.comment(person(slug, "Ada Lovelace"), slug, pid, {"content": "Planned"})
    for reader in (user(slug, "Someone Else"), ANONYMOUS):
        assert context.service.get(reader, slug, pid)["author"] is None
        listed = context.board.list(reader, slug, _query())["items"]
        assert next(p for p in listed if p["id"] == pid)["author"] is None
        thread = context.service.comments(reader, slug, pid, 50, 0)["items"]
        assert [c["author"] and c["author"]["name"] for c in thread] == [None, "Ada Lovelace"]
    # Its author and the team still see the name.
    for reader in (author, manager(slug)):
        assert context.service.get(reader, slug, pid)["author"]["name"] == "Grace Hopper"
        assert context.service.comments(reader, slug, pid, 50, 0)["items"][0]["author"]["name"] == "Grace Hopper"


def _query():
    from posts.board import ListQuery

    return ListQuery(limit=100)
