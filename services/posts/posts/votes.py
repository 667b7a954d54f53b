"""Votes: one per identity and post, counted atomically with the post's voteCount.

A vote is a document (unique per post and identity) whose ``countsFor`` names the post
whose ``voteCount`` includes it; see :class:`posts.models.Vote`. Casting one costs one
insert, one findAndModify of the post and one outbox insert, in one transaction.
"""

from __future__ import annotations

from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from common import auth
from common.errors import Conflict, NotFound
from common.ids import now, object_id
from posts import access, contract, shapes, txn
from posts.service import PostStore


def shadow(post_id: str) -> str:
    """``countsFor`` of a vote on a merged post whose voter already counts on the canonical post."""
    return f"shadow:{post_id}"


class VoteService:
    def __init__(self, repo: PostStore):
        self.repo = repo

    def vote(self, caller: auth.Caller, slug: str, post_id: str) -> tuple[dict, bool]:
        """Cast the caller's vote; return ``(post, created)`` (voting twice changes nothing)."""
        ws = access.require_allowed(self.repo.workspaces, caller, slug, "anonVote")
        oid = object_id(post_id, "post")
        user = access.identity(caller)

        def work(session):
            self.repo.votes.insert_one(
                {"_id": ObjectId(), "workspace": slug, "postId": oid, "userId": user, "countsFor": post_id, "createdAt": now()},
                session=session,
            )
            doc = self.repo.posts.find_one_and_update(
                {"_id": oid, "workspace": slug, "mergedInto": None},
                {"$inc": {"voteCount": 1}},
                return_document=ReturnDocument.AFTER,
                session=session,
            )
            if doc is None or not access.can_see(caller, slug, doc):
                raise self._refusal(caller, slug, post_id)  # aborts: the vote is not kept
            self.repo.outbox.add(
                session, contract.VOTE_CREATED, slug, {"postId": post_id, "userId": user, "voteCount": doc["voteCount"]}
            )
            return doc

        try:
            doc = txn.run(self.repo.store, work)
            created = True
        except DuplicateKeyError:
            # Voted already (on this post, or on a post merged into it): nothing changes.
            doc, created = self.repo.find_visible(caller, slug, post_id), False
            if doc.get("mergedInto"):
                raise self._refusal(caller, slug, post_id) from None
        return shapes.post(doc, ws, True, access.is_manager(caller, slug)), created

    def unvote(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """Withdraw the caller's vote for this post (and for the posts merged into it)."""
        ws = access.require_allowed(self.repo.workspaces, caller, slug, "anonVote")
        oid = object_id(post_id, "post")
        user = access.identity(caller)

        def work(session):
            removed = self.repo.votes.find_one_and_delete({"countsFor": post_id, "userId": user}, session=session)
            if removed is None:
                return None
            doc = self.repo.posts.find_one_and_update(
                {"_id": oid, "workspace": slug, "mergedInto": None},
                {"$inc": {"voteCount": -1}},
                return_document=ReturnDocument.AFTER,
                session=session,
            )
            if doc is None or not access.can_see(caller, slug, doc):
                raise self._refusal(caller, slug, post_id)
            children = [shadow(m["id"]) for m in doc.get("mergedPosts", [])]
            if children:
                # The voter's uncounted votes on merged posts go too: they no longer back this idea.
                self.repo.votes.delete_many({"userId": user, "countsFor": {"$in": children}}, session=session)
            self.repo.outbox.add(
                session, contract.VOTE_DELETED, slug, {"postId": post_id, "userId": user, "voteCount": doc["voteCount"]}
            )
            return doc

        doc = txn.run(self.repo.store, work)
        if doc is None:  # had not voted: nothing changes
            doc = self.repo.find_visible(caller, slug, post_id)
            if doc.get("mergedInto"):
                raise self._refusal(caller, slug, post_id)
        return shapes.post(doc, ws, False, access.is_manager(caller, slug))

    def _refusal(self, caller: auth.Caller, slug: str, post_id: str) -> Exception:
        doc = self.repo.posts.find_one({"_id": ObjectId(post_id), "workspace": slug}, projection={"mergedInto": 1, "moderationState": 1, "authorId": 1})
        if doc is None or not access.can_see(caller, slug, doc):
            return NotFound(f"post '{post_id}' not found")
        into = doc["mergedInto"]
        return Conflict(f"post '{post_id}' is merged into '{into['id']}'; vote on that post instead")
