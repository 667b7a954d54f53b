"""Merge a post into a canonical post, and undo it exactly.

Merging A into B (managers only): A shows ``mergedInto`` B and leaves lists, search and
the roadmap; B lists A in ``mergedPosts``; A's votes move to B, except a voter who
already counts on B, whose vote on A is kept aside (``shadow:<A>``) so nobody counts
twice. B's voteCount becomes its distinct voters; commentCounts do not change
(comments stay on their post). A keeps the voteCount it had, shown in B's
``mergedPosts``. Unmerging moves exactly A's votes back, so both posts are as before.

Refused with 409: merging a merged post, merging into a merged post, merging a post
that others are merged into (unmerge those first), unmerging a post that is not merged.
Merging a post into itself is 400.
"""

from __future__ import annotations

from bson import ObjectId

from common import auth
from common.errors import BadRequest, Conflict, NotFound
from common.ids import now, object_id
from posts import contract, shapes
from posts.service import PostStore
from posts.votes import shadow


class MergeService:
    def __init__(self, repo: PostStore):
        self.repo = repo

    def merge(self, caller: auth.Caller, slug: str, post_id: str, into_id: str) -> dict:
        auth.require_manager(caller, slug)
        ws = self.repo.workspaces.get(slug)
        a_oid = object_id(post_id, "post")
        b_oid = object_id(into_id, "post")
        if a_oid == b_oid:
            raise BadRequest("field 'intoPostId': a post cannot be merged into itself")
        a_id, b_id = str(a_oid), str(b_oid)

        def work(session):
            a = self._get(slug, a_oid, session)
            b = self._get(slug, b_oid, session)
            if a.get("mergedInto"):
                raise Conflict(f"post '{a_id}' is already merged into '{a['mergedInto']['id']}'")
            if b.get("mergedInto"):
                raise Conflict(f"post '{b_id}' is itself merged into '{b['mergedInto']['id']}'; merge into that post")
            if a.get("mergedPosts"):
                raise Conflict(f"post '{a_id}' has posts merged into it; unmerge them first")
            voters = [v["userId"] for v in self.repo.votes.find({"countsFor": a_id}, projection={"userId": 1}, session=session)]
            counted = set()
            if voters:
                counted = {
                    v["userId"]
                    for v in self.repo.votes.find({"countsFor": b_id, "userId": {"$in": voters}}, projection={"userId": 1}, session=session)
                }
            if counted:
                self.repo.votes.update_many(
                    {"countsFor": a_id, "userId": {"$in": sorted(counted)}}, {"$set": {"countsFor": shadow(a_id)}}, session=session
                )
            moved = self.repo.votes.update_many({"countsFor": a_id}, {"$set": {"countsFor": b_id}}, session=session).modified_count
            # a and b were read in this transaction's snapshot, so the documents after the change
            # are computed here; a change to either since then makes the writes conflict and rerun.
            stamp = now()
            a_set = {"mergedInto": {"id": b_id, "title": b["title"]}, "listed": False, "updatedAt": stamp}
            entry = {"id": a_id, "title": a["title"], "voteCount": a.get("voteCount", 0)}
            a = {**a, **a_set}
            b = {**b, "voteCount": b.get("voteCount", 0) + moved, "mergedPosts": [*b.get("mergedPosts", []), entry], "updatedAt": stamp}
            b_change = {"$inc": {"voteCount": moved}, "$push": {"mergedPosts": entry}, "$set": {"updatedAt": stamp}}
            self.repo.writer.write(session, [
                self.repo.update_op(a_oid, {"$set": a_set}),
                self.repo.update_op(b_oid, b_change),
                self.repo.event_op(slug, contract.POST_MERGED, {"post": shapes.post_event(a, ws), "into": shapes.post_event(b, ws)}),
            ])
            return a

        doc = self.repo.store.transaction(work)
        return self.repo.shape(caller, slug, ws, [doc])[0]

    def unmerge(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        auth.require_manager(caller, slug)
        ws = self.repo.workspaces.get(slug)
        a_oid = object_id(post_id, "post")
        a_id = str(a_oid)

        def work(session):
            a = self._get(slug, a_oid, session)
            if not a.get("mergedInto"):
                raise Conflict(f"post '{a_id}' is not merged")
            b_id = a["mergedInto"]["id"]
            moved = self.repo.votes.update_many(
                {"postId": a_oid, "countsFor": b_id}, {"$set": {"countsFor": a_id}}, session=session
            ).modified_count
            kept = self.repo.votes.update_many(
                {"postId": a_oid, "countsFor": shadow(a_id)}, {"$set": {"countsFor": a_id}}, session=session
            ).modified_count
            stamp = now()
            a_set = {"mergedInto": None, "voteCount": moved + kept, "listed": a["moderationState"] == contract.APPROVED, "updatedAt": stamp}
            a = {**a, **a_set}
            ops = [self.repo.update_op(a_oid, {"$set": a_set})]
            b = self.repo.posts.find_one({"_id": ObjectId(b_id)}, session=session)
            if b is not None:
                b = {**b, "voteCount": b.get("voteCount", 0) - moved, "updatedAt": stamp,
                     "mergedPosts": [m for m in b.get("mergedPosts", []) if m["id"] != a_id]}
                b_change = {"$inc": {"voteCount": -moved}, "$pull": {"mergedPosts": {"id": a_id}}, "$set": {"updatedAt": stamp}}
                ops.append(self.repo.update_op(b["_id"], b_change))
            data = {"post": shapes.post_event(a, ws), "from": shapes.post_event(b, ws) if b else None}
            ops.append(self.repo.event_op(slug, contract.POST_UNMERGED, data))
            self.repo.writer.write(session, ops)
            return a

        doc = self.repo.store.transaction(work)
        return self.repo.shape(caller, slug, ws, [doc])[0]

    def _get(self, slug: str, oid: ObjectId, session) -> dict:
        doc = self.repo.posts.find_one({"_id": oid, "workspace": slug}, session=session)
        if doc is None:
            raise NotFound(f"post '{oid}' not found")
        return doc
