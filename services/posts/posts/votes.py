"""Votes: one per identity and post, counted atomically with the post's voteCount.

A vote is a document (unique per post and identity) whose ``countsFor`` names the post
whose ``voteCount`` includes it; see :class:`posts.models.Vote`. Casting one costs three
round trips in one transaction: reading the post, then the vote, the post's counter and the
outbox event together (:class:`posts.txn.CrossWriter`), the commit.
"""

from __future__ import annotations

from bson import ObjectId
from pymongo import DeleteMany, DeleteOne, InsertOne
from pymongo.errors import DuplicateKeyError

from common import auth
from common.errors import Conflict, NotFound
from common.ids import now, object_id
from posts import access, contract, shapes
from posts.service import PostStore


def shadow(post_id: str) -> str:
    """``countsFor`` of a vote on a merged post whose voter already counts on the canonical post."""
    return f"shadow:{post_id}"


class NotVoted(Exception):
    """Raised inside the transaction to undo the counter when there was no vote to withdraw."""


class VoteService:
    def __init__(self, repo: PostStore):
        self.repo = repo

    def vote(self, caller: auth.Caller, slug: str, post_id: str) -> tuple[dict, bool]:
        """Cast the caller's vote; return ``(post, created)`` (voting twice changes nothing)."""
        ws = access.require_allowed(self.repo.workspaces, caller, slug, "anonVote")
        oid = object_id(post_id, "post")
        user = access.identity(caller)

        def work(session):
            doc = self._votable(session, caller, slug, oid, post_id)
            doc["voteCount"] += 1
            vote = {"_id": ObjectId(), "workspace": slug, "postId": oid, "userId": user, "countsFor": post_id, "createdAt": now()}
            event = {"postId": post_id, "userId": user, "voteCount": doc["voteCount"]}
            # A second vote by the same identity hits the unique index and aborts the count too.
            self.repo.writer.write(session, [
                InsertOne(vote, namespace=self.repo.votes.full_name),
                self.repo.update_op(oid, {"$inc": {"voteCount": 1}}),
                self.repo.event_op(slug, contract.VOTE_CREATED, event),
            ])
            return doc

        try:
            doc = self.repo.store.transaction(work, hot_key=post_id)
            created = True
        except DuplicateKeyError:
            # Voted already (on this post, or on a post merged into it): nothing changes.
            doc, created = self.repo.find_visible(caller, slug, post_id), False
        return shapes.post(doc, ws, True, access.is_manager(caller, slug)), created

    def unvote(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """Withdraw the caller's vote for this post (and for the posts merged into it)."""
        ws = access.require_allowed(self.repo.workspaces, caller, slug, "anonVote")
        oid = object_id(post_id, "post")
        user = access.identity(caller)

        def work(session):
            doc = self._votable(session, caller, slug, oid, post_id)
            doc["voteCount"] -= 1
            event = {"postId": post_id, "userId": user, "voteCount": doc["voteCount"]}
            ops = [DeleteOne({"countsFor": post_id, "userId": user}, namespace=self.repo.votes.full_name)]
            children = [shadow(m["id"]) for m in doc.get("mergedPosts", [])]
            if children:
                # The voter's uncounted votes on merged posts go too: they no longer back this idea.
                ops.append(DeleteMany({"userId": user, "countsFor": {"$in": children}}, namespace=self.repo.votes.full_name))
            ops += [self.repo.update_op(oid, {"$inc": {"voteCount": -1}}), self.repo.event_op(slug, contract.VOTE_DELETED, event)]
            if self.repo.writer.write(session, ops)[0] != 1:
                raise NotVoted()  # aborts: the counter and the event are undone
            return doc

        try:
            doc = self.repo.store.transaction(work, hot_key=post_id)
        except NotVoted:
            doc = self.repo.find_visible(caller, slug, post_id)  # had not voted: nothing changes
        return shapes.post(doc, ws, False, access.is_manager(caller, slug))

    def _votable(self, session, caller: auth.Caller, slug: str, oid: ObjectId, post_id: str) -> dict:
        """The post as this transaction reads it; refuse (and so abort) when it is unknown,
        invisible to the caller, or merged."""
        doc = self.repo.posts.find_one({"_id": oid, "workspace": slug}, projection={"terms": 0, "titleTerms": 0}, session=session)
        if doc is None or not access.can_see(caller, slug, doc):
            raise NotFound(f"post '{post_id}' not found")
        if doc.get("mergedInto"):
            into = doc["mergedInto"]
            raise Conflict(f"post '{post_id}' is merged into '{into['id']}'; vote on that post instead")
        return doc
