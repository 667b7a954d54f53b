"""Every database command and outbox write of the posts service.

The service layer decides; this module knows where things are stored and how to reach them
in few round trips. Writes that others should hear of go into one transaction with their
outbox event (:meth:`transaction`), and the writes of one transaction go to the server
together (:meth:`write`: one client ``bulkWrite`` where the server has it).

Posts are never changed with findAndModify: a transaction reads the post, and its update
goes in the same bulk write as the rest. That is as exact (a change since the snapshot makes
the update conflict and the transaction run again) and costs no more round trips, while the
local stand-in scans its collection for every findAndModify (docs/benchmarks.md).
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

from bson import ObjectId
from pymongo.client_session import ClientSession
from pymongo.errors import DuplicateKeyError

from common.db import Delete, Insert, Store, Update, Write, new_document
from common.events import Outbox
from posts import contract
from posts.models import Comment, Post, Vote, WorkspaceView

T = TypeVar("T")
# What a read of posts leaves out: the search features are the repository's own business.
WITHOUT_TERMS = {"terms": 0, "titleTerms": 0}


class PostRepository:
    def __init__(self, store: Store):
        self.store = store
        self.outbox = Outbox(store.db, contract.TOPIC)
        self.posts = Post._get_collection()
        self.votes = Vote._get_collection()
        self.comments = Comment._get_collection()
        self.workspace_views = WorkspaceView._get_collection()

    # -- transactions -----------------------------------------------------------------------

    def transaction(self, work: Callable[[ClientSession], T], *, hot_key: str | None = None) -> T:
        """Run ``work(session)`` in one transaction, again on a write conflict (``hot_key``:
        the post every such transaction writes, so this process's writers queue instead)."""
        return self.store.transaction(work, hot_key=hot_key)

    def write(self, session: ClientSession, writes: list[Write]) -> list[int]:
        return self.store.write(session, writes)

    def event(self, slug: str, type_: str, data: dict) -> Insert:
        """The outbox write of an event, beside the change it reports."""
        return self.outbox.insert(type_, slug, data)

    # -- posts ------------------------------------------------------------------------------

    @staticmethod
    def new_post(**fields) -> dict:
        return new_document(Post, id=ObjectId(), **fields)

    def add_post(self, doc: dict, event: Insert) -> None:
        """Insert a new post and its event in one transaction.

        Two plain inserts, not one bulk write: a client bulkWrite that opens a transaction
        carries the transaction's readConcern, which the local stand-in refuses."""

        def work(session):
            Insert(self.posts, doc).apply(session)
            event.apply(session)

        self.transaction(work)

    def update_post(self, oid: ObjectId, change: dict) -> Update:
        """An update of a post the same transaction read first."""
        return Update(self.posts, {"_id": oid}, change)

    def find_post(self, slug: str, oid: ObjectId, session: ClientSession | None = None) -> dict | None:
        return self.posts.find_one({"_id": oid, "workspace": slug}, projection=WITHOUT_TERMS, session=session)

    def page(self, filters: dict, sort: list, offset: int, limit: int) -> list[dict]:
        return list(self.posts.find(filters, projection=WITHOUT_TERMS, sort=sort, skip=offset, limit=limit))

    def posts_by_id(self, oids: list[ObjectId]) -> dict[ObjectId, dict]:
        return {d["_id"]: d for d in self.posts.find({"_id": {"$in": oids}}, projection=WITHOUT_TERMS)}

    def existing_ids(self, slug: str, oids: list[ObjectId]) -> set[str]:
        return {str(d["_id"]) for d in self.posts.find({"_id": {"$in": oids}, "workspace": slug}, projection={"_id": 1})}

    def update_links(self, session: ClientSession, doc: dict) -> None:
        """Keep what other posts show of this one (mergedInto / mergedPosts: its title and
        moderation state) current."""
        pid = str(doc["_id"])
        shown = {"title": doc["title"], "moderationState": doc["moderationState"]}
        if doc.get("mergedInto"):
            self.posts.update_one(
                {"_id": ObjectId(doc["mergedInto"]["id"]), "mergedPosts.id": pid},
                {"$set": {f"mergedPosts.$.{k}": v for k, v in shown.items()}},
                session=session,
            )
        for child in doc.get("mergedPosts", []):
            self.posts.update_one({"_id": ObjectId(child["id"])}, {"$set": {f"mergedInto.{k}": v for k, v in shown.items()}}, session=session)

    def search_candidates(self, slug: str, terms: list[str], limit: int) -> list[dict]:
        """Posts sharing a term with the query, with what scoring and filtering need.

        Only ``{workspace, terms: {$in}}`` goes to the server: the local stand-in plans that
        shape well and slows badly with more predicates, so the rest is filtered by the caller."""
        return list(
            self.posts.find(
                {"workspace": slug, "terms": {"$in": terms}},
                projection={"terms": 1, "titleTerms": 1, "listed": 1, "mergedInto": 1, "boardId": 1},
                limit=limit,
                batch_size=limit,  # one round trip, no getMore
            )
        )

    def roadmap(self, filters: dict, statuses: list[str], limit: int) -> Iterable[dict]:
        """Each status column's top posts by votes, in one round trip: one branch per status
        joined with ``$unionWith``, each its own index walk of at most ``limit`` posts."""

        def column(status: str) -> list[dict]:
            return [
                {"$match": {**filters, "statusSlug": status}},
                {"$sort": {"voteCount": -1, "_id": -1}},
                {"$limit": limit},
                {"$project": {"title": 1, "voteCount": 1, "statusSlug": 1}},
            ]

        first, *rest = statuses
        pipeline = column(first) + [{"$unionWith": {"coll": self.posts.name, "pipeline": column(s)}} for s in rest]
        return self.posts.aggregate(pipeline, batchSize=limit * len(statuses))

    # -- votes ------------------------------------------------------------------------------

    def voted_ids(self, user: str, live: list[str], merged: list[ObjectId]) -> set[str]:
        """Which of these posts ``user``'s vote counts for (``live``: by id; ``merged``: posts
        merged since, shown as voted when the user voted on them before the merge)."""
        clauses = ([{"countsFor": {"$in": live}}] if live else []) + ([{"postId": {"$in": merged}}] if merged else [])
        if not clauses:
            return set()
        query = {"userId": user, **(clauses[0] if len(clauses) == 1 else {"$or": clauses})}
        found: set[str] = set()
        for v in self.votes.find(query, projection={"countsFor": 1, "postId": 1}):
            found |= {v["countsFor"], str(v["postId"])}
        return found

    def insert_vote(self, **fields) -> Insert:
        return Insert(self.votes, new_document(Vote, id=ObjectId(), **fields))

    def delete_vote(self, user: str, counts_for: str) -> Delete:
        return Delete(self.votes, {"countsFor": counts_for, "userId": user})

    def delete_votes(self, user: str, counts_for: list[str]) -> Delete:
        return Delete(self.votes, {"userId": user, "countsFor": {"$in": counts_for}}, many=True)

    def voters(self, session: ClientSession, counts_for: str, among: list[str] | None = None) -> list[str]:
        query: dict = {"countsFor": counts_for}
        if among is not None:
            query["userId"] = {"$in": among}
        return [v["userId"] for v in self.votes.find(query, projection={"userId": 1}, session=session)]

    def move_votes(self, session: ClientSession, query: dict, counts_for: str) -> int:
        """Make the matching votes count for ``counts_for``; how many moved."""
        return self.votes.update_many(query, {"$set": {"countsFor": counts_for}}, session=session).modified_count

    # -- comments ---------------------------------------------------------------------------

    @staticmethod
    def new_comment(**fields) -> dict:
        return new_document(Comment, **fields)

    def insert_comment(self, doc: dict) -> Insert:
        return Insert(self.comments, doc)

    def find_comment(self, slug: str, oid: ObjectId) -> dict | None:
        return self.comments.find_one({"_id": oid, "workspace": slug})

    def comment_page(self, post_oid: ObjectId, with_private: bool, offset: int, limit: int) -> list[dict]:
        query: dict = {"postId": post_oid}
        if not with_private:
            query["isPrivate"] = False
        return list(self.comments.find(query, sort=[("path", 1)], skip=offset, limit=limit, batch_size=limit))

    # -- the workspaces read model ----------------------------------------------------------

    def workspace_view(self, slug: str) -> dict | None:
        return self.workspace_views.find_one({"_id": slug})

    def workspace_views_since(self, since) -> list[dict]:
        """Snapshots stored at or after ``since`` (an indexed server time; None: all)."""
        return list(self.workspace_views.find({} if since is None else {"syncedAt": {"$gte": since}}))

    def store_workspace_view(self, slug: str, version: int, fields: dict) -> None:
        """Store a snapshot unless the same or a newer version is stored already."""
        try:
            self.workspace_views.update_one(
                {"_id": slug, "version": {"$lt": version}},
                {"$set": {**fields, "version": version}, "$currentDate": {"syncedAt": True}},
                upsert=True,
            )
        except DuplicateKeyError:
            pass  # a newer or equal version is stored already
