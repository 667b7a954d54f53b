"""Merges and suggested duplicates: folding a post into another (and back), and the queue of
posts that look like duplicates, which the team accepts (a merge) or dismisses.

Merging A into B moves A's votes to B, except a voter who already counts on B, whose vote on
A is kept aside so nobody counts twice; unmerging moves exactly A's votes back. Merging a
merged post, into a merged post, or a post others are merged into is 409; a post into itself
400. Each is one unit of work with both posts' counters, revenue (posts.revenue) and scores
(posts.scores), and its outbox event.
"""

from __future__ import annotations

import hashlib

from bson import ObjectId

from common import auth
from common.errors import BadRequest, Conflict, NotFound
from common.ids import now, object_id
from common.validation import check
from posts import contract, embeddings, schemas, shapes
from posts.access import Access
from posts.config import PostsConfig
from posts.reads import Reads
from posts.readmodel import Workspaces
from posts.repository import PostRepository
from posts.revenue import Revenue
from posts.scores import Scores


class Merges:
    def __init__(self, repo: PostRepository, access: Access, workspaces: Workspaces, revenue: Revenue, scores: Scores,
                 reads: Reads, config: PostsConfig):
        self.repo = repo
        self.access = access
        self.workspaces = workspaces
        self.revenue = revenue
        self.scores = scores
        self.reads = reads  # a new post is compared as search compares (suggested duplicates)
        self.config = config

    def merge(self, caller: auth.Caller, slug: str, post_id: str, body) -> dict:
        auth.require_manager(caller, slug)
        into_id = check(body, schemas.MERGE)["intoPostId"]
        return self._merge(caller, slug, post_id, into_id)

    def _merge(self, caller: auth.Caller, slug: str, post_id: str, into_id: str, accepting: str | None = None) -> dict:
        """Merge ``post_id`` into ``into_id``; ``accepting``: the suggestion this merge accepts,
        decided in the same unit of work (409, and no merge, if it was decided meanwhile)."""
        ws = self.workspaces.get(slug)
        a_oid = object_id(post_id, "post")
        b_oid = object_id(into_id, "post")
        if a_oid == b_oid:
            raise BadRequest("field 'intoPostId': a post cannot be merged into itself")
        a_id, b_id = str(a_oid), str(b_oid)
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> dict:
            a = self._existing(tx, slug, a_oid)
            b = self._existing(tx, slug, b_oid)
            if a.get("mergedInto"):
                raise Conflict(f"post '{a_id}' is already merged into '{a['mergedInto']['id']}'")
            if b.get("mergedInto"):
                raise Conflict(f"post '{b_id}' is itself merged into '{b['mergedInto']['id']}'; merge into that post")
            if a.get("mergedPosts"):
                raise Conflict(f"post '{a_id}' has posts merged into it; unmerge them first")
            voters = tx.voters(a_id)
            counted = sorted(tx.voters(b_id, among=voters)) if voters else []
            if accepting is not None:
                tx.add(tx.decide(slug, accepting, contract.ACCEPTED, actor))
            # Written now: the companies are counted again from where the votes count after the move.
            tx.add(*tx.merge_votes(a_id, b_id, counted))
            touched = tx.flush()
            if accepting is not None and touched[0] == 0:
                raise Conflict("the suggestion was decided meanwhile")  # aborts the merge too
            moved = touched[-1]
            b_revenue, b_tally = self.revenue.retally(tx, slug, b_id)
            _, a_tally = self.revenue.retally(tx, slug, a_id)  # no vote counts for a now
            # a and b were read in this unit of work's snapshot, so the documents after the
            # change are computed here; a change to either since then makes the writes conflict
            # and the work run again.
            stamp = now()
            into, entry = shapes.link(b), shapes.link(a, voteCount=a.get("voteCount", 0))
            a_after = {**a, "mergedInto": into, "listed": False, "revenueCents": 0, "updatedAt": stamp}
            a_scored = self.scores.of(tx, slug, a_after)
            b_after = {**b, "voteCount": b.get("voteCount", 0) + moved, "mergedPosts": [*b.get("mergedPosts", []), entry],
                       "revenueCents": b_revenue, "updatedAt": stamp}
            b_scored = self.scores.of(tx, slug, b_after)
            a_after, b_after = {**a_after, **a_scored}, {**b_after, **b_scored}
            settings = self.access.triage_of(slug, [a_after, b_after], tx)
            data = {"post": shapes.post_event(a_after, ws, settings), "into": shapes.post_event(b_after, ws, settings), "actor": actor}
            tx.add(*b_tally, *a_tally, tx.close_suggestions_of(slug, a_id, actor),
                   *tx.merge_post(a, into, a_scored, stamp, shapes.happened(contract.MERGED_INTO, stamp, actor, post=into)),
                   *tx.add_merged(b, entry, moved, b_revenue, b_scored, stamp,
                                  shapes.happened(contract.MERGED_IN, stamp, actor, post=shapes.link(a))),
                   tx.event(slug, contract.POST_MERGED, data))
            return a_after

        doc = self.repo.unit_of_work(work)
        return self.access.shape(caller, slug, ws, [doc])[0]

    def unmerge(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        auth.require_manager(caller, slug)
        ws = self.workspaces.get(slug)
        a_oid = object_id(post_id, "post")
        a_id = str(a_oid)

        def work(tx: PostRepository) -> dict:
            a = self._existing(tx, slug, a_oid)
            if not a.get("mergedInto"):
                raise Conflict(f"post '{a_id}' is not merged")
            b_id = a["mergedInto"]["id"]
            # Written now: the companies are counted again from where the votes count after the move.
            tx.add(*tx.unmerge_votes(a_oid, b_id))
            moved, kept = tx.flush()
            a_revenue, a_tally = self.revenue.retally(tx, slug, a_id)
            tx.add(*a_tally)
            stamp = now()
            listed = a["moderationState"] == contract.APPROVED
            a_after = {**a, "mergedInto": None, "voteCount": moved + kept, "listed": listed, "revenueCents": a_revenue,
                       "updatedAt": stamp}
            a_scored = self.scores.of(tx, slug, a_after)
            a_after.update(a_scored)
            actor = auth.actor(caller)
            tx.add(*tx.unmerge_post(a, moved + kept, listed, a_revenue, a_scored, stamp,
                                    shapes.happened(contract.UNMERGED_FROM, stamp, actor, post=a["mergedInto"])))
            b = tx.find_post(slug, ObjectId(b_id))
            b_after = None
            if b is not None:
                b_revenue, b_tally = self.revenue.retally(tx, slug, b_id)
                b_after = {**b, "voteCount": b.get("voteCount", 0) - moved, "revenueCents": b_revenue, "updatedAt": stamp,
                           "mergedPosts": [m for m in b.get("mergedPosts", []) if m["id"] != a_id]}
                b_scored = self.scores.of(tx, slug, b_after)
                b_after.update(b_scored)
                tx.add(*b_tally, *tx.remove_merged(b, a_id, moved, b_revenue, b_scored, stamp,
                                                   shapes.happened(contract.UNMERGED_OUT, stamp, actor, post=shapes.link(a))))
            settings = self.access.triage_of(slug, [a_after, b_after] if b_after else [a_after], tx)
            data = {"post": shapes.post_event(a_after, ws, settings),
                    "from": shapes.post_event(b_after, ws, settings) if b_after else None, "actor": actor}
            tx.add(tx.event(slug, contract.POST_UNMERGED, data))
            return a_after

        doc = self.repo.unit_of_work(work)
        return self.access.shape(caller, slug, ws, [doc])[0]

    def _existing(self, tx: PostRepository, slug: str, oid: ObjectId) -> dict:
        doc = tx.find_post(slug, oid)
        if doc is None:
            raise NotFound(f"post '{oid}' not found")
        return doc

    # -- suggested duplicates -----------------------------------------------------------------

    def suggest_duplicates(self, slug: str, post_id: str) -> int:
        """Queue the listed posts most similar to a new post (its title, as search compares
        them) for the team; how many were queued. A pair suggested before, whatever became of
        it, is not queued again."""
        oid = ObjectId(post_id)
        doc = self.repo.find_post(slug, oid)
        if doc is None or doc.get("mergedInto"):
            return 0
        vector = embeddings.from_stored(self.repo.embedding_of(oid))
        self.reads.build_now(slug)  # compared with every listed post, not only those sharing a word
        matches = self.reads.search_candidates(slug, doc["title"], vector, False, None, self.config.lexical_candidates)
        created = (round(doc["createdAt"].timestamp() * 1000), int(post_id, 16))
        pairs = []
        for match in matches:
            other = f"{match.entry.oid:024x}"
            if other == post_id:
                continue
            if match.similarity < self.config.suggest_similarity or len(pairs) == contract.SUGGESTIONS_PER_POST:
                break
            # The newer of the two is the one to fold in (this event may be handled after a later post's).
            newer, older = (post_id, other) if created > (match.entry.created, match.entry.oid) else (other, post_id)
            pairs.append({
                "_id": suggestion_id(slug, newer, older), "workspace": slug, "postId": newer, "intoId": older,
                "similarity": round(match.similarity, 4), "state": contract.OPEN, "decidedBy": None, "createdAt": now(),
            })
        return self.repo.suggest(pairs)

    def suggestions(self, caller: auth.Caller, slug: str, state: str, limit: int, offset: int) -> dict:
        """The suggested duplicates in ``state``, newest first, with both posts (team only)."""
        auth.require_manager(caller, slug)
        ws = self.workspaces.get(slug)
        docs = self.repo.suggestion_page(slug, state, limit, offset)
        posts = self.repo.posts_by_id(list({ObjectId(p) for d in docs for p in (d["postId"], d["intoId"])}))
        return {"items": [shapes.suggestion(d, posts, ws) for d in docs]}

    def accept_suggestion(self, caller: auth.Caller, slug: str, suggestion_id_: str) -> dict:
        """Merge the suggestion's newer post into the older one (votes move as a merge moves
        them); the merged post, as the merge route returns it."""
        auth.require_manager(caller, slug)
        found = self._open_suggestion(slug, suggestion_id_)
        return self._merge(caller, slug, found["postId"], found["intoId"], accepting=found["_id"])

    def dismiss_suggestion(self, caller: auth.Caller, slug: str, suggestion_id_: str) -> dict:
        """Not duplicates: the pair is never suggested again."""
        auth.require_manager(caller, slug)
        ws = self.workspaces.get(slug)
        found = self._open_suggestion(slug, suggestion_id_)
        if not self.repo.dismiss(slug, found["_id"], auth.actor(caller)):
            raise Conflict(f"suggestion '{suggestion_id_}' was decided meanwhile")
        doc = self.repo.find_suggestion(slug, found["_id"])
        posts = self.repo.posts_by_id([ObjectId(doc["postId"]), ObjectId(doc["intoId"])])
        return shapes.suggestion(doc, posts, ws)

    def _open_suggestion(self, slug: str, suggestion_id_: str) -> dict:
        found = self.repo.find_suggestion(slug, suggestion_id_)
        if found is None:
            raise NotFound(f"suggestion '{suggestion_id_}' not found")
        if found["state"] != contract.OPEN:
            raise Conflict(f"suggestion '{suggestion_id_}' is {found['state']} already")
        return found


def suggestion_id(slug: str, a: str, b: str) -> str:
    """One id per workspace and pair of posts, whichever is the newer."""
    return hashlib.sha256(" ".join([slug, *sorted((a, b))]).encode()).hexdigest()[:24]
