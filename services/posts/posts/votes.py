"""Votes: casting one (the caller's own, or someone's on their behalf), withdrawing it, and the
team's list of the votes that count for a post.

One vote per identity and post; ``countsFor`` names the post whose ``voteCount`` includes it
(:class:`posts.models.Vote`): the post itself, or the post it is merged into (posts.merges). A
vote commits in one unit of work with the post's counters, its revenue (posts.revenue) and
score (posts.scores) and the outbox event; a post's votes queue in this process (``hot_key``)
instead of conflicting. A new post's author casts theirs in the post's own unit of work
(:meth:`Votes.by_author`, the workspace's ``authorVotes``), counted the same way
(:meth:`Votes.counted`).
"""

from __future__ import annotations

from pymongo.errors import DuplicateKeyError

from common import auth
from common.db import Write
from common.errors import BadRequest, Conflict, Forbidden, Unauthorized
from common.ids import now
from common.directory import People
from common.validation import check
from posts import access, contract, schemas, shapes
from posts.access import Access
from posts.readmodel import Snapshot, Workspaces
from posts.repository import PostRepository
from posts.revenue import Revenue
from posts.scores import Scores


class NotVoted(Exception):
    """Raised inside the unit of work to undo the counter when there was no vote to withdraw."""


class Votes:
    def __init__(self, repo: PostRepository, access: Access, workspaces: Workspaces, revenue: Revenue, scores: Scores,
                 people: People | None = None):
        self.repo = repo
        self.access = access
        self.workspaces = workspaces
        self.revenue = revenue
        self.scores = scores
        self.people = people  # addresses are the people service's: voters by email, the team's voter list

    def vote(self, caller: auth.Caller, slug: str, post_id: str) -> tuple[dict, bool]:
        """Cast the caller's vote; return ``(post, created)`` (voting twice changes nothing).

        Four round trips in one transaction: reading the post; reading the voter's companies
        (posts.revenue; none for an anonymous visitor); the vote, the post's counters and the
        outbox event together; the commit. A member of companies new to the post adds one
        round trip for their counts and one for their spend."""
        ws = self.access.participant(caller, slug, "anonVote")
        doc, created = self._cast(caller, slug, post_id, access.identity(caller), {"name": caller.name})
        return shapes.post(doc, ws, True, access.is_manager(caller, slug), self.access.triage_of(slug, [doc]),
                           self.access.reader(caller, slug, ws)), created

    def vote_for(self, caller: auth.Caller, slug: str, post_id: str, body) -> tuple[dict, bool]:
        """A vote for someone else, from a sales call or a support ticket: a team member, a
        manager key or a write key (an integration) names the person by ``email`` or ``userId``.
        It counts once per person like any vote (their own vote, before or after, is the same
        vote). Returns ``(answer, created)``.

        The team's answer is the vote as the voters' list shows it (the person's name, address,
        companies and spend, who added it and from where). A write key is not the team: it gets
        a receipt of the post's count alone, the same whether it added the vote or the person
        counted already, so naming addresses is no way to read who they are, what they spend,
        or what the team noted of an earlier vote."""
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("authentication required: a team member, a manager key or a write key votes on someone's behalf")
        team = access.is_manager(caller, slug)
        if not (team or (caller.role == auth.WRITE_KEY and caller.workspace == slug)):
            raise Forbidden("only the team, a manager key or a write key of this workspace votes on someone's behalf")
        fields = check(body, schemas.VOTE_FOR)
        if ("email" in fields) == ("userId" in fields):
            raise BadRequest("name the person by one of 'email' or 'userId'")
        self.workspaces.get(slug)
        if "email" in fields:
            if self.people is None:
                raise BadRequest("this deployment has no people service: name the person by 'userId'")
            user = self.people.user_of(fields["email"])
        else:
            user = fields["userId"]
        extra = {"addedBy": auth.actor(caller), "source": fields.get("source"), "note": fields.get("note")}
        post, created = self._cast(caller, slug, post_id, user, extra)
        if not team:  # a receipt: no read of the person, their companies or their vote
            return shapes.vote_receipt(post, created), created
        vote = self.repo.vote_of(post_id, user)
        if vote is None:  # their vote is on a post merged into this one: it counts here
            raise Conflict(f"'{user}' votes for this post already, through a post merged into it")
        return self._voters(slug, [vote])[0], created

    def votes(self, caller: auth.Caller, slug: str, post_id: str, limit: int, offset: int) -> dict:
        """The votes counting for a post, newest first, with who voted, their companies and,
        for a vote on someone's behalf, who added it and from where (team only: addresses,
        companies and spend are the team's)."""
        auth.require_manager(caller, slug)
        self.workspaces.get(slug)
        post = self.access.visible(caller, slug, post_id)
        return {"items": self._voters(slug, self.repo.counted_votes(str(post["_id"]), limit, offset))}

    def _voters(self, slug: str, votes: list[dict]) -> list[dict]:
        persons = self.people.persons([v["userId"] for v in votes]) if self.people is not None else {}
        companies = self.repo.companies_by_id(slug, sorted({c for v in votes for c in v.get("companies", ())}))
        return [shapes.voter(v, persons.get(v["userId"]), companies) for v in votes]

    def _cast(self, caller: auth.Caller, slug: str, post_id: str, user: str, extra: dict) -> tuple[dict, bool]:
        """Cast ``user``'s vote (with ``extra`` fields); ``(post, created)``."""

        def work(tx: PostRepository) -> dict:
            doc, writes, event = self.counted(tx, slug, self._votable(tx, caller, slug, post_id), user, extra)
            tx.add(*writes, tx.event(slug, contract.VOTE_CREATED, event))
            return doc

        try:
            return self.repo.unit_of_work(work, hot_key=post_id), True
        except DuplicateKeyError:
            # Voted already (on this post, or on a post merged into it): nothing changes.
            return self.access.visible(caller, slug, post_id), False

    def by_author(self, tx: PostRepository, caller: auth.Caller, slug: str, ws: Snapshot,
                  post: dict) -> tuple[dict, list[Write], dict | None]:
        """The vote a new post's author casts with it, in the post's unit of work ``tx``: where
        the workspace's ``authorVotes`` is on and the author is a person (an SSO user, a person
        with a session: ``access.a_person``; not an anonymous visitor, a manager key, the
        operator or a write key's agent). As :meth:`counted`, the writes to add after the post's
        insert; ``(post, [], None)`` when there is no such vote."""
        if not (ws.author_votes and access.a_person(caller)):
            return post, [], None
        return self.counted(tx, slug, post, access.identity(caller), {"name": caller.name})

    def counted(self, tx: PostRepository, slug: str, post: dict, user: str, extra: dict) -> tuple[dict, list[Write], dict]:
        """``user``'s vote for ``post`` (with ``extra`` fields), as every vote counts: the post
        after it (one vote more, the spend of the voter's companies that did not count for it
        yet, scored); the writes that record it, the vote first (a second vote by the same
        identity hits the unique index and aborts the count too), the voter's and their
        companies' touches and the post's counters; and the data of its ``vote.created`` event,
        which the caller writes after its own events (the relay publishes in the order they
        were made)."""
        post_id = str(post["_id"])
        companies, touched = self.revenue.voter(tx, slug, user)
        revenue, counted = self.revenue.count(tx, slug, post_id, companies, 1)
        after, count = self._counted(tx, slug, post, 1, revenue)
        vote = tx.insert_vote(workspace=slug, postId=post["_id"], userId=user, countsFor=post_id, companies=companies,
                              createdAt=now(), **extra)
        return after, [vote, *touched, *counted, *count], {"postId": post_id, "userId": user, "voteCount": after["voteCount"]}

    def unvote(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """Withdraw the caller's vote for this post (and for the posts merged into it)."""
        ws = self.access.participant(caller, slug, "anonVote")
        user = access.identity(caller)

        def work(tx: PostRepository) -> dict:
            return self.withdrawn(tx, slug, self._votable(tx, caller, slug, post_id), user)

        try:
            doc = self.repo.unit_of_work(work, hot_key=post_id)
        except NotVoted:
            doc = self.access.visible(caller, slug, post_id)  # had not voted: nothing changes
        return shapes.post(doc, ws, False, access.is_manager(caller, slug), self.access.triage_of(slug, [doc]),
                           self.access.reader(caller, slug, ws))

    def withdrawn(self, tx: PostRepository, slug: str, doc: dict, user: str) -> dict:
        """``user``'s vote for the post ``doc`` withdrawn in the unit of work ``tx`` (and their
        votes kept aside on the posts merged into it), its counts, revenue and score moved and
        ``vote.deleted`` told; the post after it. NotVoted (which aborts all of it) when
        ``user`` had no vote counting for it."""
        post_id = str(doc["_id"])
        companies, touched = self.revenue.voter(tx, slug, user)
        # Counted only if the vote is there: if not, the check below aborts all of it.
        revenue, counted = self.revenue.count(tx, slug, post_id, companies, -1)
        merged = [m["id"] for m in doc.get("mergedPosts", [])]
        after, count = self._counted(tx, slug, doc, -1, revenue)
        event = {"postId": post_id, "userId": user, "voteCount": after["voteCount"]}
        tx.add(*tx.withdraw_vote(user, post_id, merged), *touched, *counted, *count,
               tx.event(slug, contract.VOTE_DELETED, event))
        if tx.flush()[0] != 1:
            raise NotVoted()  # aborts: the counter and the event are undone
        return after

    def _counted(self, tx: PostRepository, slug: str, doc: dict, step: int, revenue: int) -> tuple[dict, list[Write]]:
        """The post with one vote more (``step`` 1) or less (-1) and its revenue moved by
        ``revenue`` cents, scored; and the writes that store it."""
        after = {**doc, "voteCount": doc["voteCount"] + step, "revenueCents": doc.get("revenueCents", 0) + revenue}
        scored = self.scores.of(tx, slug, after)
        return {**after, **scored}, tx.count_vote(doc, step, revenue, scored)

    def _votable(self, tx: PostRepository, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """The post as the unit of work reads it; refuse (and so abort) when it is unknown,
        invisible to the caller, or merged."""
        doc = self.access.visible(caller, slug, post_id, tx)
        if doc.get("mergedInto"):
            into = doc["mergedInto"]
            raise Conflict(f"post '{post_id}' is merged into '{into['id']}'; vote on that post instead")
        return doc
