"""Every database command and outbox write of the posts service.

The service layer decides; this module knows where things are stored and how to reach them
in few round trips. Its commands are named for what they mean (``count_vote``, ``merge_post``):
a write command returns the writes, which a unit of work adds (``repo.unit_of_work(work)``,
common.repository) and sends with the change's outbox event in one client ``bulkWrite`` where
the server has it; a read command reads in the unit of work its repository is bound to (``tx``),
or outside any when called on the service's own.

Posts are never changed with findAndModify: a transaction reads the post, and its update
goes in the same bulk write as the rest. That is as exact (a change since the snapshot makes
the update conflict and the transaction run again) and costs no more round trips, while the
local stand-in scans its collection for every findAndModify (docs/benchmarks.md).
"""

from __future__ import annotations

import time
from typing import Iterable

from bson import ObjectId
from common import auth
from common.db import ChangeWaiter, Delete, Insert, Store, Update, Write, insert_new, new_document
from common.ids import now
from common.repository import Repository
from pymongo import UpdateOne
from pymongo.cursor import Cursor
from pymongo.errors import DuplicateKeyError

from posts import contract
from posts.models import (Comment, CompanyView, MemberView, Post, PostClock, PostCompany, Suggestion, TriageSettings, Vote, WarmIndex,
                          WorkspaceView)

# What a read of posts leaves out: the search features are the query index's business.
WITHOUT_TERMS = {"terms": 0, "titleTerms": 0, "embedding": 0}
# What the query index keeps of a post (everything but the content and merge links).
INDEXED = {f: 1 for f in ("boardId", "statusSlug", "moderationState", "listed", "mergedInto", "deletedAt", "createdAt",
                          "voteCount", "commentCount", "revenueCents", "score", "facets", "title", "terms", "titleTerms", "embedding", "changedAt", "eta")}
# Change clocks per workspace (collection ``post_clocks``): each post write moves one (by its
# post), in the same bulk write. Several, so concurrent writes to different posts seldom
# contend on one document.
CLOCKS = 16
# A catch-up rereads posts changed this long before the newest change it saw: a transaction
# stamps changedAt before it commits, so commits may land out of stamp order by up to this.
CATCH_UP_OVERLAP_NS = 5_000_000_000
# What board statistics read of a post.
BRIEF = {f: 1 for f in ("title", "statusSlug", "voteCount", "commentCount", "privateCommentCount", "createdAt", "lastCommentAt")}
# What a rescore reads of a post (posts.triage.Settings.derived and conform).
SCORED = {f: 1 for f in ("voteCount", "revenueCents", "tags", "fields", "owner", "score", "facets", "scoreVersion", "changedAt")}
# Marks, in the posts collection, that posts written before they kept their last public
# comment (lastCommentAt, lastCommentByTeam) have been given it.
LAST_COMMENTS_BACKFILLED = "~backfilled:lastComment"
# ``countsFor`` of a vote on a merged post whose voter already counts on the canonical post
# (posts.models.Vote): kept aside, so nobody counts twice, until an unmerge gives it back.
SHADOW = "shadow:"


def clock_id(slug: str, n: int) -> str:
    return f"{slug}:{n}"


def clock_ids(slug: str) -> list[str]:
    return [clock_id(slug, n) for n in range(CLOCKS)]


def _shadow(post_id: str) -> str:
    return SHADOW + post_id


class PostRepository(Repository):
    def __init__(self, store: Store):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.posts = store.collection(Post)
        self.clock_docs = store.collection(PostClock)
        self.warm_indexes = store.collection(WarmIndex)
        self.votes = store.collection(Vote)
        self.comments = store.collection(Comment)
        self.workspace_views = store.collection(WorkspaceView)
        self.triage = store.collection(TriageSettings)
        self.suggestions = store.collection(Suggestion)
        self.company_views = store.collection(CompanyView)
        self.member_views = store.collection(MemberView)
        self.post_companies_ = store.collection(PostCompany)

    # -- posts ------------------------------------------------------------------------------

    @staticmethod
    def new_post(**fields) -> dict:
        return new_document(Post, id=ObjectId(), changedAt=time.time_ns(), **fields)

    def insert_post(self, doc: dict) -> list[Write]:
        """A new post, and the move of its change clock."""
        return [self._tick(doc["workspace"], doc["_id"]), Insert(self.posts, doc)]

    def edit_post(self, post: dict, fields: dict, happened: dict | None = None) -> list[Write]:
        """Set these fields of a post the unit of work read (an edit, a triage), and add what
        ``happened`` (a status change) to its history."""
        return self._update_post(post["workspace"], post["_id"], {"$set": fields, **_history(happened)})

    def delete_post(self, post: dict, actor: dict | None, at) -> list[Write]:
        """A soft deletion: the post stays, marked with when and by whom, off every list, search,
        the roadmap and statistics (``listed`` false; ``deletedAt`` set, which every read of
        posts leaves out)."""
        return self._update_post(post["workspace"], post["_id"], {"$set": {"deletedAt": at, "deletedBy": actor, "listed": False,
                                                                          "updatedAt": at}})

    def relink(self, post: dict) -> list[Write]:
        """Keep what other posts show of this one (mergedInto / mergedPosts: its title and
        moderation state) current."""
        pid = str(post["_id"])
        shown = {"title": post["title"], "moderationState": post["moderationState"]}
        writes: list[Write] = []
        if post.get("mergedInto"):
            writes.append(Update(self.posts, {"_id": ObjectId(post["mergedInto"]["id"]), "mergedPosts.id": pid},
                                 {"$set": {f"mergedPosts.$.{k}": v for k, v in shown.items()}}))
        for child in post.get("mergedPosts", []):
            writes.append(Update(self.posts, {"_id": ObjectId(child["id"])}, {"$set": {f"mergedInto.{k}": v for k, v in shown.items()}}))
        return writes

    def count_vote(self, post: dict, step: int, revenue_cents: int, scored: dict) -> list[Write]:
        """A vote on ``post`` counted (``step`` 1) or withdrawn (-1), moving its revenue by
        ``revenue_cents`` (posts.revenue), with the score after it (posts.scores.Scores.of)."""
        return self._update_post(post["workspace"], post["_id"],
                                 {"$inc": {"voteCount": step, "revenueCents": revenue_cents}, "$set": scored})

    def count_comment(self, post: dict, comment: dict, last_public: bool) -> list[Write]:
        """``comment`` counted on its post (the public or the private count); with
        ``last_public``, it is also the post's last public comment (board statistics)."""
        change: dict = {"$inc": {"privateCommentCount" if comment["isPrivate"] else "commentCount": 1}}
        if last_public:
            change["$set"] = {"lastCommentAt": comment["createdAt"], "lastCommentByTeam": comment["isTeamMember"]}
        return self._update_post(post["workspace"], post["_id"], change)

    def uncount_comment(self, post: dict, comment: dict, last: dict | None) -> list[Write]:
        """A deleted ``comment`` no longer counted on its post; when it was the last public one,
        ``last`` is the public comment before it (None: none is left) as the post's last."""
        change: dict = {"$inc": {"privateCommentCount" if comment.get("isPrivate") else "commentCount": -1}}
        if not comment.get("isPrivate") and post.get("lastCommentAt") is not None and post["lastCommentAt"] <= comment["createdAt"]:
            if last is None:
                change["$unset"] = {"lastCommentAt": "", "lastCommentByTeam": ""}
            else:
                change["$set"] = {"lastCommentAt": last["createdAt"], "lastCommentByTeam": bool(last.get("isTeamMember"))}
        return self._update_post(post["workspace"], post["_id"], change)

    def merge_post(self, post: dict, into: dict, scored: dict, at, happened: dict) -> list[Write]:
        """``post`` merged into another (``into``: posts.shapes.link of it): off the lists, and
        without revenue, since no vote counts for it any more."""
        change = {"$set": {"mergedInto": into, "listed": False, "revenueCents": 0, "updatedAt": at, **scored}, **_history(happened)}
        return self._update_post(post["workspace"], post["_id"], change)

    def add_merged(self, post: dict, merged: dict, votes: int, revenue_cents: int, scored: dict, at, happened: dict) -> list[Write]:
        """``post`` took in a merged post (``merged``: its link) and ``votes`` of its votes."""
        change = {"$inc": {"voteCount": votes}, "$push": {"mergedPosts": merged, **_history(happened)["$push"]},
                  "$set": {"revenueCents": revenue_cents, "updatedAt": at, **scored}}
        return self._update_post(post["workspace"], post["_id"], change)

    def unmerge_post(self, post: dict, votes: int, listed: bool, revenue_cents: int, scored: dict, at, happened: dict) -> list[Write]:
        """``post`` on its own again, with the ``votes`` that count for it once more."""
        change = {"$set": {"mergedInto": None, "voteCount": votes, "listed": listed, "revenueCents": revenue_cents,
                           "updatedAt": at, **scored}, **_history(happened)}
        return self._update_post(post["workspace"], post["_id"], change)

    def remove_merged(self, post: dict, merged_id: str, votes: int, revenue_cents: int, scored: dict, at,
                      happened: dict) -> list[Write]:
        """``post`` gave back a post merged into it, and the ``votes`` that went with it."""
        change = {"$inc": {"voteCount": -votes}, "$pull": {"mergedPosts": {"id": merged_id}},
                  "$set": {"revenueCents": revenue_cents, "updatedAt": at, **scored}, **_history(happened)}
        return self._update_post(post["workspace"], post["_id"], change)

    def conform_posts(self, slug: str, planned: list[tuple[ObjectId, dict, int | None]]) -> list[Write]:
        """Each post's values conformed to new triage settings (``(id, values, changedAt as
        read)``), written only while the post is still as read: the posts' updates first, in
        order (what each matched says whether its post was still as read), then their clocks."""
        updates = [self._update_post(slug, oid, {"$set": values}, expect={"changedAt": stamp}) for oid, values, stamp in planned]
        return [update for update, _ in updates] + [tick for _, tick in updates]

    def _update_post(self, slug: str, oid: ObjectId, change: dict, expect: dict | None = None) -> list[Write]:
        """An update of a post the same unit of work read first (or, with ``expect``, of the
        post only while it still has those field values), stamped for the query index, and the
        move of its change clock."""
        stamped = {**change, "$set": {**change.get("$set", {}), "changedAt": time.time_ns()}}
        return [Update(self.posts, {"_id": oid, **(expect or {})}, stamped), self._tick(slug, oid)]

    def _tick(self, slug: str, oid: ObjectId) -> Update:
        return Update(self.clock_docs, {"_id": clock_id(slug, int(str(oid), 16) % CLOCKS)}, {"$inc": {"n": 1}}, upsert=True)

    # -- title vectors (the backfill; posts.workers) -------------------------------------------

    def any_without_any_vector(self) -> bool:
        """Whether a post has no title vector at all (written while the model was off or
        failing): one lookup on the ``embeddingModel`` index, cheap enough to ask while idle,
        where the count below reads every post on the local stand-in (seconds at 100,000). Posts
        only: the collection's marker documents (``LAST_COMMENTS_BACKFILLED``) have no vector
        either, and counting them made every idle look a full count."""
        return self.posts.find_one({"embeddingModel": None, "workspace": {"$exists": True}}, projection={"_id": 1}) is not None

    def count_without_vector(self, model: str) -> int:
        return self.posts.count_documents({"workspace": {"$exists": True}, "embeddingModel": {"$ne": model}})

    def without_vector(self, model: str, after: ObjectId, limit: int) -> list[dict]:
        """The next posts (by _id, after ``after``) whose title has no vector of ``model``."""
        query = {"_id": {"$gt": after}, "embeddingModel": {"$ne": model}}
        return list(self.posts.find(query, projection={"workspace": 1, "title": 1}).sort("_id", 1).limit(limit))

    def store_vectors(self, model: str, posts: list[tuple[dict, bytes | None]]) -> None:
        """Store each post's title vector, unless its title changed since it was read (the
        edit stored a vector of its own), stamped so the query indexes take it in."""
        writes: list[Write] = []
        for post, vector in posts:
            change = {"$set": {"embedding": vector, "embeddingModel": model}}
            writes += self._update_post(post["workspace"], post["_id"], change, expect={"title": post["title"]})
        if writes:
            self.store.write(None, writes)  # no transaction: each update stands on its own

    # -- the read engines' queries (posts.reads) ---------------------------------------------

    def page_cursor(self, slug: str, filters, sort: str, offset: int, limit: int, roadmap: bool = False) -> Cursor:
        """A page of a list (``filters``: posts.reads.Filters) in ``sort`` order, unexecuted.

        Its filter starts with the equality prefix of one of the compound indexes of
        ``posts.models.Post`` (the population's), whose next keys are the sort's, so on real
        MongoDB it walks that index in order and stops at the page."""
        query: dict = {"workspace": slug}
        if filters.manager:
            query["mergedInto"] = None
            query["deletedAt"] = None
            if filters.moderation is not None:
                query["moderationState"] = filters.moderation
        else:
            query["listed"] = True
        if filters.status is not None:
            query["statusSlug"] = filters.status
        if filters.board is not None:
            query["boardId"] = filters.board
        if filters.words:
            query["terms"] = {"$all": list(filters.words)}
        if filters.facets:
            query["facets"] = {"$all": list(filters.facets)}
        if filters.only is not None:
            query["_id"] = {"$in": [ObjectId(i) for i in sorted(filters.only)]}
        projection = {"title": 1, "voteCount": 1, "tags": 1, "eta": 1} if roadmap else WITHOUT_TERMS
        return self.posts.find(query, projection=projection, sort=contract.SORTS[sort], skip=offset, limit=limit,
                               batch_size=max(1, limit))

    def sharing_terms(self, slug: str, terms: list[str], manager: bool, board: str | None, most: int) -> list[dict]:
        """At most ``most`` posts sharing a search term (a search while the workspace's index
        is being built)."""
        query: dict = {"workspace": slug, "terms": {"$in": terms},
                       **({"mergedInto": None, "deletedAt": None} if manager else {"listed": True})}
        if board is not None:
            query["boardId"] = board
        return list(self.posts.find(query, projection=INDEXED, limit=most))

    def index_source(self, slug: str) -> tuple[Iterable[dict], dict[str, int]]:
        """What a workspace's query index is built from: its change clocks, read first (so a
        change committed during the scan shows as a moved clock later), then every post
        (streamed: the index keeps what it needs of each)."""
        clocks = self.clocks(slug)
        return self.posts.find({"workspace": slug}, projection=INDEXED, batch_size=1000), clocks

    def note_warm_index(self, slug: str, posts: int, size: int) -> None:
        self.warm_indexes.replace_one({"_id": slug}, {"posts": posts, "bytes": size, "builtAt": now()}, upsert=True)

    def warm_index_records(self) -> list[dict]:
        """The workspaces whose indexes a new process builds before it is ready (a small
        collection: read whole, ordered here)."""
        return sorted(self.warm_indexes.find(), key=lambda d: d["builtAt"], reverse=True)

    def count_posts(self, slug: str) -> int:
        return self.posts.count_documents({"workspace": slug})

    def clocks(self, slug: str) -> dict[str, int]:
        return {d["_id"]: d.get("n", 0) for d in self.clocks_cursor(slug)}

    def clocks_cursor(self, slug: str) -> Cursor:
        return self.clock_docs.find({"_id": {"$in": clock_ids(slug)}})

    def changed_since(self, slug: str, changed_at: int) -> Cursor:
        return self.posts.find({"workspace": slug, "changedAt": {"$gt": changed_at - CATCH_UP_OVERLAP_NS}}, projection=INDEXED)

    def find_post(self, slug: str, oid: ObjectId) -> dict | None:
        """The post, unless it does not exist or was deleted (a deleted post is gone to everyone)."""
        return self.posts.find_one({"_id": oid, "workspace": slug, "deletedAt": None}, projection=WITHOUT_TERMS, session=self.session)

    def embedding_of(self, oid: ObjectId) -> bytes | None:
        return (self.posts.find_one({"_id": oid}, projection={"embedding": 1}) or {}).get("embedding")

    def posts_by_id(self, oids: list[ObjectId]) -> dict[ObjectId, dict]:
        return {d["_id"]: d for d in self.posts_cursor(oids)}

    def posts_cursor(self, oids: list[ObjectId]) -> Cursor:
        return self.posts.find({"_id": {"$in": oids}}, projection=WITHOUT_TERMS)

    def posts_by_ids(self, slug: str, oids: list[ObjectId]) -> list[dict]:
        return list(self.posts.find({"_id": {"$in": oids}, "workspace": slug, "deletedAt": None}, projection={"title": 1, "listed": 1}))

    def person_voters(self, slug: str, post_ids: list[str]) -> dict[str, set[str]]:
        """The persons (``person:<id>``) whose votes count for each of ``post_ids``."""
        voters: dict[str, set[str]] = {}
        query = {"workspace": slug, "countsFor": {"$in": post_ids}, "userId": {"$regex": f"^{auth.PERSON_PREFIX}"}}
        for vote in self.votes.find(query, projection={"countsFor": 1, "userId": 1}):
            voters.setdefault(vote["countsFor"], set()).add(vote["userId"])
        return voters

    def any_post(self, slug: str, match: dict) -> bool:
        """Whether a post of the workspace, whatever its state, matches ``match`` (a board, a status)."""
        return self.posts.find_one({"workspace": slug, **match}, projection={"_id": 1}) is not None

    def exported_after(self, slug: str, kind: str, after: ObjectId | None, limit: int) -> list[dict]:
        """Up to ``limit`` of the workspace's posts, votes or comments (``kind``) in id order
        after ``after``, deleted posts and comments left out (an export's page)."""
        collection = {"posts": self.posts, "votes": self.votes, "comments": self.comments}[kind]
        query = {"workspace": slug, **({"_id": {"$gt": after}} if after else {})}
        if kind != "votes":
            query["deletedAt"] = None
        projection = {"terms": 0, "titleTerms": 0, "embedding": 0, "history": 0} if kind == "posts" else None
        return list(collection.find(query, projection=projection, sort=[("_id", 1)], limit=limit))

    # -- a person's data (posts.erasure) -------------------------------------------------------

    def written_by(self, kind: str, user: str, slug: str | None) -> list[dict]:
        """The posts, comments or votes (``kind``) of ``user``, in one workspace or in all
        (deleted ones too: they are still theirs)."""
        collection = {"posts": self.posts, "votes": self.votes, "comments": self.comments}[kind]
        query = {"userId" if kind == "votes" else "authorId": user, **({"workspace": slug} if slug else {})}
        projection = {"terms": 0, "titleTerms": 0, "embedding": 0, "history": 0} if kind == "posts" else None
        return list(collection.find(query, projection=projection, sort=[("_id", 1)]))

    def acted_on(self, user: str, slug: str | None) -> list[dict]:
        """Posts that name ``user`` as an actor: in their history, as who changed the status,
        as owner, or as who deleted them."""
        named = [{"history.actor.id": user}, {"statusChangedBy.id": user}, {"owner.id": user}, {"deletedBy.id": user}]
        query = {"$or": named, **({"workspace": slug} if slug else {})}
        return list(self.posts.find(query, {"workspace": 1, "history": 1, "statusChangedBy": 1, "owner": 1, "deletedBy": 1}))

    def rename_actor(self, post: dict, user: str, name: str) -> list[Write]:
        """``post`` with every mention of ``user`` as an actor renamed ``name``."""
        def renamed(actor):
            return {**actor, "name": name} if isinstance(actor, dict) and actor.get("id") == user else actor

        change = {"history": [{**h, "actor": renamed(h.get("actor"))} for h in post.get("history", [])]}
        for field in ("statusChangedBy", "owner", "deletedBy"):
            if post.get(field) is not None:
                change[field] = renamed(post[field])
        return self._update_post(post["workspace"], post["_id"], {"$set": change})

    def anonymize_post(self, post: dict, author_id: str, author: dict) -> list[Write]:
        return self._update_post(post["workspace"], post["_id"], {"$set": {"authorId": author_id, "author": author}})

    def anonymize_comments(self, user: str, slug: str | None, author_id: str, author: dict) -> list[Write]:
        here = {"workspace": slug} if slug else {}
        return [Update(self.comments, {"authorId": user, **here},
                       {"$set": {"authorId": author_id, "author": author, "authorName": None}}, many=True),
                Update(self.comments, {"deletedBy.id": user, **here}, {"$set": {"deletedBy.name": author["name"]}}, many=True),
                Update(self.votes, {"addedBy.id": user, **here}, {"$set": {"addedBy.name": author["name"]}}, many=True),
                Delete(self.member_views, {"userId": user, **here}, many=True)]

    def drop_vote(self, vote: dict) -> Delete:
        """A vote kept aside on a merged post (it counts nowhere): gone with no count to move."""
        return Delete(self.votes, {"_id": vote["_id"]})

    def existing_ids(self, slug: str, oids: list[ObjectId]) -> set[str]:
        query = {"_id": {"$in": oids}, "workspace": slug, "deletedAt": None}
        return {str(d["_id"]) for d in self.posts.find(query, projection={"_id": 1})}

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

    def withdraw_vote(self, user: str, post_id: str, merged_ids: list[str]) -> list[Delete]:
        """The user's vote counting for ``post_id`` (first: what it deleted says whether there
        was one), and their votes kept aside on the posts merged into it: they no longer back
        this idea."""
        writes = [Delete(self.votes, {"countsFor": post_id, "userId": user})]
        if merged_ids:
            writes.append(Delete(self.votes, {"userId": user, "countsFor": {"$in": [_shadow(m) for m in merged_ids]}}, many=True))
        return writes

    def voters(self, counts_for: str, among: list[str] | None = None) -> list[str]:
        query: dict = {"countsFor": counts_for}
        if among is not None:
            query["userId"] = {"$in": among}
        return [v["userId"] for v in self.votes.find(query, projection={"userId": 1}, session=self.session)]

    def merge_votes(self, post_id: str, into_id: str, counted: list[str]) -> list[Update]:
        """A merge's votes: those of ``counted`` (voters who count on ``into_id`` already) kept
        aside, then the rest of ``post_id``'s made to count for ``into_id`` (the last write:
        what it matched is how many moved)."""
        kept = [Update(self.votes, {"countsFor": post_id, "userId": {"$in": counted}}, {"$set": {"countsFor": _shadow(post_id)}},
                       many=True)] if counted else []
        return [*kept, Update(self.votes, {"countsFor": post_id}, {"$set": {"countsFor": into_id}}, many=True)]

    def unmerge_votes(self, post: ObjectId, into_id: str) -> list[Update]:
        """An unmerge's votes: those cast on ``post`` that count for ``into_id``, then those
        kept aside, made to count for ``post`` again (what each matched: how many moved)."""
        post_id = str(post)
        return [Update(self.votes, {"postId": post, "countsFor": counts_for}, {"$set": {"countsFor": post_id}}, many=True)
                for counts_for in (into_id, _shadow(post_id))]

    # -- revenue (posts.revenue) --------------------------------------------------------------

    def member_view(self, slug: str, user: str) -> dict | None:
        return self.member_views.find_one({"_id": f"{slug} {user}"}, session=self.session)

    def touch_member(self, slug: str, user: str) -> Update:
        """A write to the voter's companies document (made if missing), so a change of them
        conflicts with this vote."""
        change = {"$inc": {"version": 1}, "$setOnInsert": {"workspace": slug, "userId": user, "companies": []}}
        return Update(self.member_views, {"_id": f"{slug} {user}"}, change, upsert=True)

    def set_member(self, slug: str, user: str, companies: list[str]) -> Update:
        change = {"$set": {"companies": companies}, "$inc": {"version": 1}, "$setOnInsert": {"workspace": slug, "userId": user}}
        return Update(self.member_views, {"_id": f"{slug} {user}"}, change, upsert=True)

    def members_of(self, slug: str, company: str) -> list[dict]:
        return list(self.member_views.find({"workspace": slug, "companies": company}))

    def set_vote_companies(self, slug: str, user: str, companies: list[str]) -> Update:
        return Update(self.votes, {"workspace": slug, "userId": user}, {"$set": {"companies": companies}}, many=True)

    def counted_posts_of(self, slug: str, user: str) -> list[str]:
        """The posts the user's votes count for (not their votes kept aside on merged posts)."""
        votes = self.votes.find({"workspace": slug, "userId": user}, projection={"countsFor": 1}, session=self.session)
        return [v["countsFor"] for v in votes if not v["countsFor"].startswith(SHADOW)]

    def counted_companies(self, post_id: str) -> list[list[str]]:
        """The companies of each vote counting for ``post_id``."""
        votes = self.votes.find({"countsFor": post_id, "companies.0": {"$exists": True}}, projection={"companies": 1}, session=self.session)
        return [v["companies"] for v in votes]

    def company_voters(self, post_id: str, companies: list[str]) -> dict[str, int]:
        ids = [f"{post_id} {c}" for c in companies]
        return {d["companyId"]: d["voters"] for d in self.post_companies_.find({"_id": {"$in": ids}}, session=self.session)}

    def post_companies(self, post_id: str) -> dict[str, int]:
        return {d["companyId"]: d["voters"] for d in self.post_companies_.find({"postId": post_id}, session=self.session)}

    def count_company(self, slug: str, post_id: str, company: str, step: int) -> Update:
        change = {"$inc": {"voters": step}, "$setOnInsert": {"workspace": slug, "postId": post_id, "companyId": company}}
        return Update(self.post_companies_, {"_id": f"{post_id} {company}"}, change, upsert=True)

    def set_company_voters(self, slug: str, post_id: str, company: str, voters: int) -> Update:
        change = {"$set": {"voters": voters}, "$setOnInsert": {"workspace": slug, "postId": post_id, "companyId": company}}
        return Update(self.post_companies_, {"_id": f"{post_id} {company}"}, change, upsert=True)

    def posts_counting(self, slug: str, company: str) -> list[str]:
        """The posts ``company`` counts on (some of its people's votes count for them)."""
        found = self.post_companies_.find({"workspace": slug, "companyId": company, "voters": {"$gt": 0}}, projection={"postId": 1})
        return [d["postId"] for d in found]

    def spends(self, slug: str, companies: list[str]) -> dict[str, int]:
        ids = [f"{slug} {c}" for c in companies]
        return {d["companyId"]: d.get("spendCents", 0) for d in self.company_views.find({"_id": {"$in": ids}}, session=self.session)}

    def touch_company(self, slug: str, company: str, step: int) -> Update:
        """A company starts (1) or stops (-1) counting on a post: a write to its document (made
        if missing), so a concurrent change of its spend conflicts with it."""
        change = {"$inc": {"posts": step}, "$setOnInsert": {"workspace": slug, "companyId": company, "spendCents": 0}}
        return Update(self.company_views, {"_id": f"{slug} {company}"}, change, upsert=True)

    def set_company(self, slug: str, company: str, name: str | None, spend_cents: int) -> None:
        self.company_views.update_one(
            {"_id": f"{slug} {company}"},
            {"$set": {"name": name, "spendCents": spend_cents}, "$setOnInsert": {"workspace": slug, "companyId": company, "posts": 0}},
            upsert=True,
        )

    def companies_by_id(self, slug: str, companies: list[str]) -> dict[str, dict]:
        return {d["companyId"]: d for d in self.company_views.find({"_id": {"$in": [f"{slug} {c}" for c in companies]}})}

    def vote_of(self, post_id: str, user: str) -> dict | None:
        return self.votes.find_one({"countsFor": post_id, "userId": user})

    def counted_votes(self, post_id: str, limit: int, offset: int) -> list[dict]:
        """The votes counting for ``post_id`` (its own, and those of posts merged into it), newest first."""
        return list(self.votes.find({"countsFor": post_id}).sort([("createdAt", -1), ("_id", -1)]).skip(offset).limit(limit))

    def set_revenue(self, slug: str, post_id: str, cents: int, scored: dict) -> list[Write]:
        """A post's revenue, with its score (posts.scores.Scores.of) computed from it."""
        return self._update_post(slug, ObjectId(post_id), {"$set": {"revenueCents": cents, **scored}})

    def posts_in(self, slug: str, post_ids: list[str]) -> dict[str, dict]:
        """What a score is computed from, of these posts, by id."""
        query = {"_id": {"$in": [ObjectId(p) for p in post_ids]}, "workspace": slug}
        return {str(d["_id"]): d for d in self.posts.find(query, projection=SCORED, session=self.session)}

    # -- triage (posts.triage) --------------------------------------------------------------

    def triage_settings(self, slug: str) -> dict | None:
        return self.triage.find_one({"_id": slug}, session=self.session)

    def save_triage(self, slug: str, version: int, stored: dict) -> list[Write]:
        """The settings' new version, and a move of every change clock of the workspace: a post
        created in a transaction that read the old version moves one clock too, so it conflicts
        and runs again, reading the new one (posts.scores)."""
        clocks = [Update(self.clock_docs, {"_id": clock}, {"$inc": {"n": 1}}, upsert=True) for clock in clock_ids(slug)]
        return [Update(self.triage, {"_id": slug}, {"$set": {**stored, "version": version, "updatedAt": now()}}, upsert=True), *clocks]

    def scored_after(self, slug: str, after: ObjectId, limit: int) -> list[dict]:
        """A batch of a workspace's posts in id order, with what their score and facets follow."""
        query = {"workspace": slug, "_id": {"$gt": after}}
        return list(self.posts.find(query, projection=SCORED, sort=[("_id", 1)], limit=limit))

    def scoring_candidates(self, slug: str) -> Cursor:
        """Every post of the workspace that is not merged, with what a score is computed from
        and its title (a formula's preview: streamed, nothing kept but the best few)."""
        return self.posts.find({"workspace": slug, "mergedInto": None, "deletedAt": None}, projection={**SCORED, "title": 1},
                               batch_size=1000)

    # -- suggested duplicates (posts.suggestions) -------------------------------------------

    def suggest(self, docs: list[dict]) -> int:
        """Queue suggestions in one round trip, each unless its pair was ever suggested; how
        many were queued."""
        return len(insert_new(self.suggestions, docs))

    def suggestion_page(self, slug: str, state: str, limit: int, offset: int) -> list[dict]:
        return list(self.suggestions.find({"workspace": slug, "state": state}, sort=[("createdAt", -1), ("_id", -1)],
                                          skip=offset, limit=limit))

    def find_suggestion(self, slug: str, suggestion_id: str) -> dict | None:
        return self.suggestions.find_one({"_id": suggestion_id, "workspace": slug}, session=self.session)

    def decide(self, slug: str, suggestion_id: str, state: str, actor: dict | None) -> Update:
        """Close an open suggestion (the filter makes a second decision match nothing)."""
        return Update(self.suggestions, {"_id": suggestion_id, "workspace": slug, "state": "open"},
                      {"$set": {"state": state, "decidedBy": actor, "decidedAt": now()}})

    def dismiss(self, slug: str, suggestion_id: str, actor: dict | None) -> bool:
        """Dismiss an open suggestion, a write on its own; False when it was decided meanwhile."""
        return self.decide(slug, suggestion_id, contract.DISMISSED, actor).apply(None) == 1

    def close_suggestions_of(self, slug: str, post_id: str, actor: dict | None) -> Update:
        """The open suggestions naming a post that was just merged: they no longer apply."""
        return Update(self.suggestions, {"workspace": slug, "state": "open", "$or": [{"postId": post_id}, {"intoId": post_id}]},
                      {"$set": {"state": "superseded", "decidedBy": actor, "decidedAt": now()}}, many=True)

    # -- board statistics -------------------------------------------------------------------

    @staticmethod
    def _seen_by(slug: str, listed_only: bool, board_id: str | None) -> dict:
        query: dict = {"workspace": slug, **({"listed": True} if listed_only else {"mergedInto": None, "deletedAt": None})}
        if board_id is not None:
            query["boardId"] = board_id
        return query

    def board_stats(self, slug: str, listed_only: bool, board_id: str | None, top: int) -> dict:
        """``{byStatus: [{_id: status, n}], topVoted: [post], newest: [post]}`` over the posts a
        caller sees (the listed ones, or every post not merged), in one aggregation."""
        pipeline = [
            {"$match": self._seen_by(slug, listed_only, board_id)},
            {"$project": BRIEF},
            {"$facet": {
                "byStatus": [{"$group": {"_id": "$statusSlug", "n": {"$sum": 1}}}],
                "topVoted": [{"$sort": dict(contract.SORTS["top"])}, {"$limit": top}],
                "newest": [{"$sort": dict(contract.SORTS["newest"])}, {"$limit": top}],
            }},
        ]
        return next(self.posts.aggregate(pipeline))

    def recent_votes(self, slug: str, since, most: int) -> dict[str, int]:
        """``{post id: votes cast since since}`` of the ``most`` posts voted for most since then
        (votes as they count now: on the post they were merged into; none kept aside). One
        aggregation over the period's votes, an index range."""
        pipeline = [{"$match": {"workspace": slug, "createdAt": {"$gte": since}}},
                    {"$group": {"_id": "$countsFor", "n": {"$sum": 1}}}, {"$sort": {"n": -1, "_id": -1}}]
        counts = {}
        for group in self.votes.aggregate(pipeline):
            if not str(group["_id"]).startswith(SHADOW):
                counts[group["_id"]] = group["n"]
                if len(counts) == most:
                    break
        return counts

    def activity(self, slug: str, since) -> dict:
        """``{posts|votes|comments: {"YYYY-MM-DD": n}}``: what was created on each day (UTC) since
        ``since``: the posts neither merged nor deleted, every vote, every comment not deleted
        (private ones too). Three aggregations, each an index range grouped into one entry a day."""
        day = {"$group": {"_id": {"$dateToString": {"format": "%Y-%m-%d", "date": "$createdAt"}}, "n": {"$sum": 1}}}
        period = {"workspace": slug, "createdAt": {"$gte": since}}
        ranges = {"posts": (self.posts, {**period, "mergedInto": None, "deletedAt": None}), "votes": (self.votes, period),
                  "comments": (self.comments, {**period, "deletedAt": None})}
        return {name: {g["_id"]: g["n"] for g in collection.aggregate([{"$match": match}, day])}
                for name, (collection, match) in ranges.items()}

    def awaiting_reply(self, slug: str, listed_only: bool, board_id: str | None, before, limit: int) -> list[dict]:
        """Posts whose last public comment is a non-team member's, written before ``before``,
        oldest first (an index range: the stalled posts' indexes in models.Post)."""
        query = {**self._seen_by(slug, listed_only, board_id), "lastCommentByTeam": False, "lastCommentAt": {"$lt": before}}
        return list(self.posts.find(query, projection=BRIEF, sort=[("lastCommentAt", 1), ("_id", 1)], limit=limit))

    def last_comments_backfilled(self) -> bool:
        return self.posts.find_one({"_id": LAST_COMMENTS_BACKFILLED}, projection={"_id": 1}) is not None

    def backfill_last_comments(self, batch: int = 1000) -> int:
        """Give every post that has public comments but no ``lastCommentAt`` its last public
        comment's time and author kind, then mark it done; how many posts changed. A post a new
        comment reached meanwhile already has it, and keeps it."""
        pipeline = [
            {"$match": {"isPrivate": {"$ne": True}, "deletedAt": None}},
            {"$sort": {"postId": 1, "createdAt": -1, "_id": -1}},
            {"$group": {"_id": "$postId", "at": {"$first": "$createdAt"}, "team": {"$first": "$isTeamMember"}}},
        ]
        changed, ops = 0, []
        for last in self.comments.aggregate(pipeline, batchSize=batch):
            ops.append(UpdateOne({"_id": last["_id"], "lastCommentAt": {"$exists": False}},
                                 {"$set": {"lastCommentAt": last["at"], "lastCommentByTeam": bool(last.get("team"))}}))
            if len(ops) == batch:
                changed += self.posts.bulk_write(ops, ordered=False).modified_count
                ops = []
        if ops:
            changed += self.posts.bulk_write(ops, ordered=False).modified_count
        self.posts.update_one({"_id": LAST_COMMENTS_BACKFILLED}, {"$set": {"n": changed}}, upsert=True)
        return changed

    # -- comments ---------------------------------------------------------------------------

    @staticmethod
    def new_comment(**fields) -> dict:
        return new_document(Comment, **fields)

    def insert_comment(self, doc: dict) -> Insert:
        return Insert(self.comments, doc)

    def find_comment(self, slug: str, oid: ObjectId) -> dict | None:
        """The comment, unless it does not exist or was deleted."""
        return self.comments.find_one({"_id": oid, "workspace": slug, "deletedAt": None}, session=self.session)

    def edit_comment(self, comment: dict, content: str, at) -> Update:
        return Update(self.comments, {"_id": comment["_id"]}, {"$set": {"content": content, "editedAt": at}})

    def delete_comment(self, comment: dict, actor: dict | None, at) -> Update:
        """A soft deletion: the comment stays, marked with when and by whom; its replies stay."""
        return Update(self.comments, {"_id": comment["_id"]}, {"$set": {"deletedAt": at, "deletedBy": actor}})

    def last_public_comment(self, post_oid: ObjectId, besides: ObjectId) -> dict | None:
        """The newest public comment of a post left when ``besides`` goes."""
        query = {"postId": post_oid, "isPrivate": False, "deletedAt": None, "_id": {"$ne": besides}}
        return self.comments.find_one(query, sort=[("createdAt", -1), ("_id", -1)], projection={"createdAt": 1, "isTeamMember": 1},
                                      session=self.session)

    def comment_page(self, post_oid: ObjectId, with_private: bool, offset: int, limit: int) -> list[dict]:
        """A page of a post's comments in thread order. A deleted comment is left out, unless a
        reply the reader sees hangs below it (it then shows as deleted, keeping its thread)."""
        query: dict = {"postId": post_oid}
        if not with_private:
            query["isPrivate"] = False
        hidden = self._hidden_deleted(post_oid, query)
        if hidden:
            query["_id"] = {"$nin": hidden}
        return list(self.comments.find(query, sort=[("path", 1)], skip=offset, limit=limit, batch_size=limit))

    def _hidden_deleted(self, post_oid: ObjectId, seen: dict) -> list[ObjectId]:
        """The post's deleted comments with no reply left below them that the reader sees
        (``seen``: the reader's filter); few, so a look per deleted comment."""
        deleted = list(self.comments.find({**seen, "deletedAt": {"$ne": None}}, projection={"path": 1}))
        if not deleted:
            return []
        live = [c["path"] for c in self.comments.find({**seen, "deletedAt": None}, projection={"path": 1})]
        return [d["_id"] for d in deleted if not any(p.startswith(d["path"] + "/") for p in live)]

    # -- the workspaces read model ----------------------------------------------------------

    def workspace_view(self, slug: str) -> dict | None:
        return self.workspace_views.find_one({"_id": slug})

    def workspace_view_changes(self, wait_seconds: float) -> ChangeWaiter:
        """What waits for a change of the read model (``common.db.ChangeWaiter``)."""
        return ChangeWaiter(self.workspace_views, wait_seconds, what="posts read model")

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


def _history(happened: dict | None) -> dict:
    """The update that adds ``happened`` to a post's history, keeping the newest
    contract.HISTORY_MAX entries (none: no change)."""
    if happened is None:
        return {}
    return {"$push": {"history": {"$each": [happened], "$slice": -contract.HISTORY_MAX}}}
