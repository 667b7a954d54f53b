"""Writing what an import brings (internal: the portability service asks, a batch at a time):
tags, posts, merges, votes and comments of another tool, each keyed by ``importKey``
(``<source>:<its id there>``), so running the same file again updates what it brought.

No outbox event is written for them: the history an import brings mails nobody and fires no
webhook (docs/import-export.md). The query indexes still catch up, as after any write, by each
post's ``changedAt`` and the workspace's change clocks. Counts, revenue and score of the posts a
batch touched are computed again from what is stored at the end of the batch, with the
service's own revenue and score code."""

from __future__ import annotations

import re
import time
from collections import Counter
from datetime import datetime, timezone
from typing import Iterator

from bson import ObjectId
from bson.errors import InvalidId
from pymongo import InsertOne, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

from common.errors import BadRequest, NotFound
from common.db import Update
from common.validation import check
from posts import contract, schemas, text, triage
from posts.repository import CLOCKS, SCORED, SHADOW, PostRepository, clock_id
from posts.revenue import Revenue
from posts.scores import Scores

DUPLICATE_KEY = 11000
# Values one $in query names at most: the local MongoDB stand-in answers a $in of n values on an
# index in time growing faster than n (votes by countsFor: 10 values 14 ms, 100 values 0.6 s,
# 500 values 13 s), so a batch asks in chunks (a round trip each: nothing for MongoDB itself).
# An import key names its workspace, so it is looked up alone: beside ``workspace`` the stand-in
# chose a workspace index and read every post of it (0.9 s for 10 keys among 8,500 posts).
IN_CHUNK = 10
# A post's counts its recount is written on condition of (someone voted or commented meanwhile: it
# is counted again), and what the recount reads of it.
GUARDED = ("voteCount", "commentCount", "privateCommentCount")
RECOUNTED = {**SCORED, "mergedInto": 1, "moderationState": 1, "commentCount": 1, "privateCommentCount": 1, "listed": 1,
             "lastCommentAt": 1, "lastCommentByTeam": 1}
TAG_COLORS = ("#64748b",)  # an imported tag's colour: neutral, the team recolours it


def parse_time(value) -> datetime:
    """An ISO 8601 time as the source gives it (``Z`` or an offset), naive UTC as stored; now if absent."""
    if not value:
        return datetime.now(timezone.utc).replace(tzinfo=None)
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return (parsed.astimezone(timezone.utc) if parsed.tzinfo else parsed).replace(tzinfo=None)


def import_key(slug: str, source: str, source_id) -> str:
    """What keys an imported document: its workspace, the source and its id there (the same
    file imported into two workspaces is two sets of documents)."""
    return f"{slug}/{source}:{source_id}"


def find_in(collection, field: str, values, query: dict | None = None, projection: dict | None = None) -> Iterator[dict]:
    """The documents of ``collection`` whose ``field`` is one of ``values`` (and that match
    ``query``), asked IN_CHUNK values at a time."""
    values = list(values)
    for start in range(0, len(values), IN_CHUNK):
        yield from collection.find({**(query or {}), field: {"$in": values[start:start + IN_CHUNK]}}, projection=projection)


def fitting_fields(settings: triage.Settings, given) -> dict:
    """The values of ``given`` (a post's ``{key: value}``) that fit a field the workspace has;
    the others are left out (a post is not refused for one)."""
    kept = {}
    for key, value in (given.items() if isinstance(given, dict) else ()):
        try:
            kept.update(triage.check_values(settings, {str(key): value}))
        except (BadRequest, NotFound):
            continue
    return kept


def tag_slug(name: str) -> str:
    return (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "tag")[:40]


class Imports:
    def __init__(self, repo: PostRepository, scores: Scores, revenue: Revenue):
        self.repo, self.scores, self.revenue = repo, scores, revenue

    def run(self, body) -> dict:
        fields = check(body, schemas.IMPORT)
        slug, source, kind, items = fields["workspace"], fields["source"], fields["kind"], fields["items"]
        ids: dict[str, str] = {}
        errors: list[dict] = []
        touched: set[ObjectId] = set()
        if kind in ("tags", "fields"):
            return self._triage(slug, kind, items)
        if kind == "recount":
            return self._recount(slug, items)
        batched = {"posts": self._posts_batch, "votes": self._votes_batch, "comments": self._comments_batch}.get(kind)
        if batched is not None:
            batched(slug, source, items, touched, ids, errors)
            items = []
        for item in items:  # merges, one at a time (a few per import)
            try:
                our = getattr(self, "_" + kind)(slug, source, item, touched)
                if our is not None:
                    ids[str(item["sourceId"])] = our
            except (KeyError, ValueError, TypeError, LookupError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        if fields.get("recount", True):
            self.recount_all(slug, touched)
        return {"ids": ids, "errors": errors}

    def _recount(self, slug: str, items: list[dict]) -> dict:
        """``{sourceId, postId}`` each: these posts counted again (an import that sent its votes
        and comments with ``recount: false`` asks at its end, so a post is counted once rather
        than after every batch that touched it: a Canny file lists votes newest first, a post's
        scattered over the whole file)."""
        ids, errors, oids = {}, [], set()
        for item in items:
            try:
                oids.add(ObjectId(item["postId"]))
                ids[str(item["sourceId"])] = str(item["postId"])
            except (KeyError, TypeError, InvalidId) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        self.recount_all(slug, oids)
        return {"ids": ids, "errors": errors}

    # -- tags and fields: the workspace's triage settings gain the ones it lacks -----------------

    def _triage(self, slug: str, kind: str, items: list[dict]) -> dict:
        """Tags (``{sourceId, name, slug?, color?}``) or custom fields (our own export's
        definitions: ``{sourceId, key, name, type, public, options?, min?, max?}``) the
        workspace lacks added to its triage settings (one it has by slug or key is the same
        one); each item's slug or key here. A field that does not fit is an error naming it."""
        def work(tx: PostRepository) -> dict:
            current = tx.triage_settings(slug) or {}
            stored = {"tags": list(current.get("tags", [])), "fields": list(current.get("fields", [])),
                      "scoreFormula": current.get("scoreFormula")}
            ids, errors = {}, []
            for item in items:
                try:
                    if kind == "tags":
                        added = self._tag(item, stored["tags"])
                    else:
                        added = self._field(item, stored)
                    ids[str(item["sourceId"])] = added
                except (KeyError, TypeError, ValueError, BadRequest) as ex:
                    errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
            if stored[kind] != list(current.get(kind, [])):
                version = current.get("version", 0) + 1
                settings = triage.Settings(version=version, tags=tuple(stored["tags"]), fields=tuple(stored["fields"]),
                                           formula_text=stored["scoreFormula"])
                # Configuration, not history: triage.updated rescores the workspace as after a save.
                tx.add(*tx.save_triage(slug, version, stored),
                       tx.event(slug, contract.TRIAGE_UPDATED, {"settings": settings.shown(True), "actor": None}))
            return {"ids": ids, "errors": errors}

        return self.repo.unit_of_work(work, hot_key=f"triage {slug}")

    @staticmethod
    def _tag(item: dict, tags: list[dict]) -> str:
        slug_ = tag_slug(str(item.get("slug") or item["name"]))
        if all(t["slug"] != slug_ for t in tags) and len(tags) < contract.MAX_TAGS:
            color = item.get("color") if re.fullmatch(contract.COLOR_PATTERN, str(item.get("color") or "")) else TAG_COLORS[0]
            tags.append({"slug": slug_, "name": str(item["name"])[:40] or slug_, "color": color})
        return slug_

    @staticmethod
    def _field(item: dict, stored: dict) -> str:
        key = str(item["key"])
        if any(f["key"] == key for f in stored["fields"]):
            return key
        if len(stored["fields"]) >= contract.MAX_FIELDS:
            raise ValueError(f"the workspace has {contract.MAX_FIELDS} custom fields already")
        wanted = {"key": key, "name": item["name"], "type": item["type"], "public": bool(item.get("public", False)),
                  **{k: item[k] for k in ("options", "min", "max") if item.get(k) is not None}}
        checked = triage.check_settings(check({"tags": stored["tags"], "fields": [*stored["fields"], wanted]}, schemas.TRIAGE))
        stored["fields"] = checked["fields"]
        return key

    # -- posts ----------------------------------------------------------------------------------

    def _post_values(self, slug: str, source: str, item: dict, settings: triage.Settings) -> tuple[str, dict]:
        """An item's import key and the fields of its post (ValueError: it cannot be one)."""
        key = import_key(slug, source, item["sourceId"])
        title = str(item["title"]).strip()[:300]
        if not title:
            raise ValueError("the post has no title")
        content = str(item.get("content") or "")
        terms, title_terms = text.index_terms(title, content)
        created = parse_time(item.get("createdAt"))
        eta = item.get("eta")
        if eta is not None and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", eta):
            eta = None
        values = {"boardId": item["boardId"], "title": title, "content": content, "statusSlug": item["status"],
                  "authorId": item.get("authorId") or "anonymous", "author": item.get("author"),
                  "tags": list(dict.fromkeys(item.get("tags") or []))[:contract.MAX_TAGS], "eta": eta,
                  "owner": item.get("owner"), "terms": terms, "titleTerms": title_terms, "createdAt": created,
                  "updatedAt": created, "changedAt": time.time_ns(),
                  "moderationState": item.get("moderationState") if item.get("moderationState") in contract.MODERATION_STATES
                  else contract.APPROVED}
        if item.get("fields"):
            values["fields"] = fitting_fields(settings, item["fields"])
        return key, values

    def _new_post(self, slug: str, key: str, values: dict, settings: triage.Settings) -> dict:
        doc = PostRepository.new_post(workspace=slug, verified=False, mergedInto=None, importKey=key,
                                      **{k: v for k, v in values.items() if k != "changedAt"})
        doc.update(settings.derived(doc))
        return doc

    def _posts(self, slug: str, source: str, item: dict, touched: set) -> str:
        """One post, on its own (a batch's item whose write failed is written again this way)."""
        settings = self.scores.settings(slug)
        key, values = self._post_values(slug, source, item, settings)
        existing = self.repo.posts.find_one({"importKey": key}, projection={"_id": 1})
        if existing is not None:
            # Its tags or owner may have changed: the facets follow (the score follows in the recount).
            values["facets"] = settings.facets(values)
            self.repo.posts.update_one({"_id": existing["_id"]}, {"$set": values})
            oid = existing["_id"]
        else:
            doc = self._new_post(slug, key, values, settings)
            self.repo.posts.insert_one(doc)
            oid = doc["_id"]
        self._ticks(slug, [oid])
        touched.add(oid)
        return str(oid)

    def _posts_batch(self, slug: str, source: str, items: list[dict], touched: set, ids: dict, errors: list) -> None:
        """A batch of posts: the settings and the posts imported before read once for all of
        them, then one write of them all (new ones inserted, the others updated) and one move
        of each change clock they touch."""
        settings = self.scores.settings(slug)
        wanted: list[tuple[dict, str, dict]] = []
        for item in items:
            try:
                wanted.append((item, *self._post_values(slug, source, item, settings)))
            except (KeyError, ValueError, TypeError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        found = {d["importKey"]: d["_id"] for d in find_in(self.repo.posts, "importKey", [key for _, key, _ in wanted],
                                                            projection={"importKey": 1})}
        writes, again, written = [], [], set()
        for item, key, values in wanted:
            if key in written:  # twice in this batch: the later one updates the first, on its own
                again.append(item)
                continue
            written.add(key)
            if key in found:
                # Its tags or owner may have changed: the facets follow (the score follows in the recount).
                values["facets"] = settings.facets(values)
                writes.append(UpdateOne({"_id": found[key]}, {"$set": values}))
                oid = found[key]
            else:
                doc = self._new_post(slug, key, values, settings)
                writes.append(InsertOne(doc))
                oid = doc["_id"]
            ids[str(item["sourceId"])] = str(oid)
            touched.add(oid)
        if writes:
            self.repo.posts.bulk_write(writes, ordered=False)
        self._ticks(slug, [ObjectId(ids[str(i["sourceId"])]) for i, _, _ in wanted if str(i["sourceId"]) in ids])
        for item in again:
            ids[str(item["sourceId"])] = self._posts(slug, source, item, touched)

    def _merges(self, slug: str, source: str, item: dict, touched: set) -> str:
        """``item``: ``{sourceId, postId, intoId}`` (our ids): the post merged into the other,
        its votes counting there (a voter counting there already is kept aside, as a merge does)."""
        post, into = ObjectId(item["postId"]), ObjectId(item["intoId"])
        docs = self.repo.posts_by_id([post, into])
        if post not in docs or into not in docs or post == into:
            raise LookupError("the merged post or the one it was merged into was not imported")
        merged, canonical = docs[post], docs[into]
        link = {"id": str(into), "title": canonical["title"], "moderationState": canonical["moderationState"]}
        self.repo.posts.update_one({"_id": post}, {"$set": {"mergedInto": link, "listed": False, "changedAt": time.time_ns()}})
        if not any(m["id"] == str(post) for m in canonical.get("mergedPosts", [])):
            self.repo.posts.update_one({"_id": into}, {"$push": {"mergedPosts": {
                "id": str(post), "title": merged["title"], "moderationState": merged["moderationState"], "voteCount": 0}}})
        for vote in self.repo.votes.find({"postId": post, "countsFor": {"$in": [str(post), SHADOW + str(post)]}}):
            self._place_vote(vote["_id"], str(into), vote["userId"], str(post))
        self._ticks(slug, [post, into])
        touched.update((post, into))
        return str(post)

    # -- votes ----------------------------------------------------------------------------------

    def _votes(self, slug: str, source: str, item: dict, touched: set) -> str:
        post_oid = ObjectId(item["postId"])
        post = self.repo.posts.find_one({"_id": post_oid, "workspace": slug}, projection={"mergedInto": 1})
        if post is None:
            raise LookupError("its post was not imported")
        user = item["userId"]
        companies = (self.repo.member_views.find_one({"_id": f"{slug} {user}"}) or {}).get("companies", [])
        counts_for = post["mergedInto"]["id"] if post.get("mergedInto") else str(post_oid)
        doc = {"workspace": slug, "postId": post_oid, "userId": user, "name": item.get("name"), "companies": companies,
               "createdAt": parse_time(item.get("createdAt")), "importKey": import_key(slug, source, item["sourceId"])}
        # One vote per voter and post: the same vote imported again (or the voter's own vote) is updated.
        existing = self.repo.votes.find_one({"postId": post_oid, "userId": user})
        if existing is None:
            try:
                vote_id = self.repo.votes.insert_one({**doc, "countsFor": SHADOW + str(post_oid)}).inserted_id
            except DuplicateKeyError:
                existing = self.repo.votes.find_one({"postId": post_oid, "userId": user})
        if existing is not None:
            vote_id = existing["_id"]
            self.repo.votes.update_one({"_id": vote_id}, {"$set": {k: v for k, v in doc.items() if k != "importKey"}})
        self._place_vote(vote_id, counts_for, user, str(post_oid))
        touched.update((ObjectId(counts_for), post_oid))  # a merged post keeps the count of its own votes
        return str(vote_id)

    def _place_vote(self, vote_id: ObjectId, counts_for: str, user: str, post_id: str) -> None:
        """Make the vote count for ``counts_for`` unless the voter counts there already (then
        it is kept aside for its own post, as a merge keeps it)."""
        taken = self.repo.votes.find_one({"countsFor": counts_for, "userId": user}, projection={"_id": 1})
        if taken is not None and taken["_id"] != vote_id:
            self.repo.votes.update_one({"_id": vote_id}, {"$set": {"countsFor": SHADOW + post_id}})
            return
        try:
            self.repo.votes.update_one({"_id": vote_id}, {"$set": {"countsFor": counts_for}})
        except DuplicateKeyError:
            self.repo.votes.update_one({"_id": vote_id}, {"$set": {"countsFor": SHADOW + post_id}})

    def _votes_batch(self, slug: str, source: str, items: list[dict], touched: set, ids: dict, errors: list) -> None:
        """A batch of votes with a few reads for all of them (their posts, voters' companies,
        the votes already there), then one ordered write of them all: the same outcome as one
        vote at a time. A vote written meanwhile by another run (a duplicate key) stops that
        write where it failed; from there on, one vote at a time settles it."""
        wanted = []
        for item in items:
            try:
                wanted.append((item, ObjectId(item["postId"]), str(item["userId"])))
            except (KeyError, TypeError, ValueError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        post_oids = list({oid for _, oid, _ in wanted})
        users = list({user for _, _, user in wanted})
        posts = {d["_id"]: d for d in find_in(self.repo.posts, "_id", post_oids, {"workspace": slug}, {"mergedInto": 1})}
        companies = {d["userId"]: d.get("companies", []) for d in find_in(self.repo.member_views, "_id", [f"{slug} {u}" for u in users])}
        # The votes on these posts and those counting for them, the voters picked here (a $in of
        # the voters too made the stand-in seek every pair).
        voters = set(users)
        existing = {(d["postId"], d["userId"]): d for d in find_in(self.repo.votes, "postId", post_oids,
                                                                   projection={"postId": 1, "userId": 1, "countsFor": 1})
                    if d["userId"] in voters}
        targets = {str(p["mergedInto"]["id"]) if p.get("mergedInto") else str(oid) for oid, p in posts.items()}
        counted = {(d["countsFor"], d["userId"]): d["_id"] for d in find_in(self.repo.votes, "countsFor", targets,
                                                                            projection={"countsFor": 1, "userId": 1})
                   if d["userId"] in voters}
        writes, written = [], []
        for item, post_oid, user in wanted:
            post = posts.get(post_oid)
            if post is None:
                errors.append({"item": str(item["sourceId"]), "message": "its post was not imported"})
                continue
            counts_for = post["mergedInto"]["id"] if post.get("mergedInto") else str(post_oid)
            found = existing.get((post_oid, user))
            vote_id = found["_id"] if found else ObjectId()
            holder = counted.get((counts_for, user))
            place = counts_for if holder in (None, vote_id) else SHADOW + str(post_oid)
            doc = {"workspace": slug, "postId": post_oid, "userId": user, "name": item.get("name"),
                   "companies": companies.get(user, []), "createdAt": parse_time(item.get("createdAt")), "countsFor": place}
            if found is None:
                writes.append(InsertOne({"_id": vote_id, **doc, "importKey": import_key(slug, source, item["sourceId"])}))
            else:
                writes.append(UpdateOne({"_id": vote_id}, {"$set": doc}))
            written.append(item)
            existing[(post_oid, user)] = {"_id": vote_id}
            if place == counts_for:
                counted[(counts_for, user)] = vote_id
            ids[str(item["sourceId"])] = str(vote_id)
            touched.update((ObjectId(counts_for), post_oid))  # a merged post keeps the count of its own votes
        try:
            if writes:
                self.repo.votes.bulk_write(writes, ordered=True)
        except BulkWriteError as ex:
            failed = ex.details["writeErrors"][0]
            if failed.get("code") != DUPLICATE_KEY:
                raise
            for item in written[failed["index"]:]:  # written meanwhile (another run): one at a time settles it
                ids[str(item["sourceId"])] = self._votes(slug, source, item, touched)

    # -- comments -------------------------------------------------------------------------------

    @staticmethod
    def _comment_values(slug: str, key: str, oid: ObjectId, post_oid: ObjectId, content: str, parent: dict | None,
                        item: dict) -> dict:
        author = item.get("author")
        return {"workspace": slug, "postId": post_oid, "parentId": str(parent["_id"]) if parent else None,
                "path": f"{parent['path']}/{oid}" if parent else str(oid), "depth": parent["depth"] + 1 if parent else 0,
                "content": content, "authorId": item.get("authorId") or "anonymous",
                "isTeamMember": bool((author or {}).get("team")), "author": author,
                "authorName": (author or {}).get("name") if (author or {}).get("team") else None,
                "isPrivate": bool(item.get("isPrivate")), "createdAt": parse_time(item.get("createdAt")), "importKey": key}

    def _comments_batch(self, slug: str, source: str, items: list[dict], touched: set, ids: dict, errors: list) -> None:
        """A batch of comments: their posts, the comments imported before (each one's and its
        parent's) read once for all of them, then one write of them all. A reply whose parent
        comes earlier in the same batch finds it there; one whose parent is not in yet is
        refused as ``parent-missing`` (the importer sends it again later)."""
        post_oids, keys = set(), []
        for item in items:
            try:
                post_oids.add(ObjectId(item["postId"]))
            except (KeyError, TypeError, ValueError, InvalidId):
                pass
            keys.append(import_key(slug, source, item.get("sourceId")))
            if item.get("parentSourceId"):
                keys.append(import_key(slug, source, item["parentSourceId"]))
        posts = {d["_id"] for d in find_in(self.repo.posts, "_id", post_oids, {"workspace": slug}, {"_id": 1})}
        known = {d["importKey"]: d for d in find_in(self.repo.comments, "importKey", keys,
                                                    projection={"importKey": 1, "path": 1, "depth": 1})}
        writes = []
        for item in items:
            try:
                post_oid = ObjectId(item["postId"])
                if post_oid not in posts:
                    raise LookupError("its post was not imported")
                content = str(item.get("content") or "").strip()
                if not content:
                    raise ValueError("the comment is empty")
                key = import_key(slug, source, item["sourceId"])
                parent = None
                if item.get("parentSourceId"):
                    parent = known.get(import_key(slug, source, item["parentSourceId"]))
                    if parent is None:
                        # The importer sends such a comment again once the rest of its thread is in.
                        raise LookupError("parent-missing: the comment it answers is not imported yet")
                oid = known[key]["_id"] if key in known else ObjectId()
                values = self._comment_values(slug, key, oid, post_oid, content, parent, item)
            except (KeyError, ValueError, TypeError, LookupError, InvalidId) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
                continue
            writes.append(UpdateOne({"_id": oid}, {"$set": values}, upsert=True))
            known[key] = {"_id": oid, "path": values["path"], "depth": values["depth"]}
            ids[str(item["sourceId"])] = str(oid)
            touched.add(post_oid)
        if writes:
            self.repo.comments.bulk_write(writes, ordered=True)

    # -- counts ---------------------------------------------------------------------------------

    def recount_all(self, slug: str, oids: set[ObjectId]) -> None:
        """Votes, comments (public and private, and the last public one), revenue and score of
        the posts a batch touched, from what is stored: a few reads for the whole batch (the
        posts, an aggregation of the votes counting for each, the companies behind them, the
        comments), then one write a post and one a company count that changed, all in one round
        trip; a post whose values are those stored already (a post just written, a file imported
        again) is not written. A merged post keeps the count of its own votes (as a merge leaves
        it), shown beside it on the post it went into.

        Not one transaction: a batch's posts are being given their title vectors by the posts
        worker meanwhile, and a transaction over hundreds of them conflicted until it gave up.
        Each post's write is instead conditional on the counts it was read with: a post whose
        counts changed in between (someone voted or commented) is counted again on its own, in
        a transaction, as a vote counts it."""
        if not oids:
            return
        pids = [str(oid) for oid in oids]
        tally = self._comment_tally(list(oids))
        repo = self.repo
        posts = {str(d["_id"]): d for d in find_in(repo.posts, "_id", oids, {"workspace": slug}, RECOUNTED)}
        # One read of the votes counting for these posts: how many each, and their companies.
        votes: Counter = Counter()
        companies: dict[str, Counter] = {pid: Counter() for pid in pids}
        for vote in find_in(repo.votes, "countsFor", pids, projection={"countsFor": 1, "companies": 1}):
            votes[vote["countsFor"]] += 1
            companies[vote["countsFor"]].update(vote.get("companies") or ())
        merged = [ObjectId(pid) for pid, post in posts.items() if post.get("mergedInto")]
        own = Counter(vote["postId"] for vote in find_in(repo.votes, "postId", merged, projection={"postId": 1}))
        before: dict[str, dict[str, int]] = {pid: {} for pid in pids}
        for row in find_in(repo.post_companies_, "postId", pids):
            before[row["postId"]][row["companyId"]] = row["voters"]
        named = set().union(*companies.values())
        spends = {d["companyId"]: d.get("spendCents", 0) for d in find_in(repo.company_views, "_id", [f"{slug} {c}" for c in named])}
        writes, guarded, clocks = [], [], Counter()
        for pid, post in posts.items():
            oid, counted_by = ObjectId(pid), companies[pid]
            for company in set(counted_by) | set(before[pid]):  # as Revenue.retally writes them
                if counted_by[company] != before[pid].get(company, 0):
                    writes.append(repo.set_company_voters(slug, pid, company, counted_by[company]))
                if (counted_by[company] > 0) != (before[pid].get(company, 0) > 0):
                    writes.append(repo.touch_company(slug, company, 1 if counted_by[company] else -1))
            into = post.get("mergedInto")
            count = own.get(oid, 0) if into else votes.get(pid, 0)
            revenue = 0 if into else sum(spends.get(c, 0) for c in counted_by)
            values = self._counted(slug, repo, post, count, revenue, tally[oid])
            if all(post.get(k) == v for k, v in values.items() if k != "changedAt"):
                continue  # as stored already (a new post, a file imported again): a post's write is the costly one
            guarded.append((len(writes), oid))
            writes.append(Update(repo.posts, {"_id": oid, **{k: post.get(k) for k in GUARDED}}, {"$set": values}))
            if into:
                writes.append(Update(repo.posts, {"_id": ObjectId(into["id"]), "mergedPosts.id": pid},
                                     {"$set": {"mergedPosts.$.voteCount": count}}))
            clocks[clock_id(slug, int(pid, 16) % CLOCKS)] += 1
        writes += [Update(repo.clock_docs, {"_id": clock}, {"$inc": {"n": n}}, upsert=True) for clock, n in clocks.items()]
        matched = repo.store.write(None, writes)
        for index, oid in guarded:
            if not matched[index]:
                self.recount(slug, oid)

    def recount(self, slug: str, oid: ObjectId) -> None:
        """One post's votes, comments, revenue and score, in one transaction."""
        pid, tally = str(oid), self._comment_tally([oid])[oid]

        def work(tx: PostRepository) -> None:
            post = tx.posts.find_one({"_id": oid, "workspace": slug}, projection=RECOUNTED, session=tx.session)
            if post is None:
                return
            into = post.get("mergedInto")
            count = tx.votes.count_documents({"postId": oid} if into else {"countsFor": pid}, session=tx.session)
            revenue, writes = self.revenue.retally(tx, slug, pid)
            tx.add(*writes, *tx._update_post(slug, oid, {"$set": self._counted(slug, tx, post, count, 0 if into else revenue, tally)}))

        self.repo.unit_of_work(work, hot_key=pid)

    def _comment_tally(self, oids: list[ObjectId]) -> dict[ObjectId, dict]:
        """Each post's public and private comments and its last public one, in one read."""
        tally: dict[ObjectId, dict] = {oid: {"public": 0, "private": 0, "last": None} for oid in oids}
        for c in find_in(self.repo.comments, "postId", oids, {"deletedAt": None},
                         {"postId": 1, "isPrivate": 1, "createdAt": 1, "isTeamMember": 1}):
            counts = tally[c["postId"]]
            if c.get("isPrivate"):
                counts["private"] += 1
                continue
            counts["public"] += 1
            if counts["last"] is None or c["createdAt"] > counts["last"]["createdAt"]:
                counts["last"] = c
        return tally

    def _counted(self, slug: str, repo: PostRepository, post: dict, votes: int, revenue: int, comments: dict) -> dict:
        """What a post's recount sets: its counts, score, whether it is listed, its last comment."""
        values = {"voteCount": votes, "revenueCents": revenue, "commentCount": comments["public"],
                  "privateCommentCount": comments["private"],
                  **self.scores.of(repo, slug, {**post, "voteCount": votes, "revenueCents": revenue}),
                  "listed": post.get("moderationState") == contract.APPROVED and not post.get("mergedInto"),
                  "changedAt": time.time_ns()}
        if comments["last"] is not None:
            values.update(lastCommentAt=comments["last"]["createdAt"], lastCommentByTeam=bool(comments["last"].get("isTeamMember")))
        return values

    def _ticks(self, slug: str, oids: list[ObjectId]) -> None:
        """Move the change clocks of these posts (each clock once, by how many of them it keeps)."""
        clocks = Counter(clock_id(slug, int(str(oid), 16) % CLOCKS) for oid in oids)
        if clocks:
            self.repo.clock_docs.bulk_write([UpdateOne({"_id": clock}, {"$inc": {"n": n}}, upsert=True) for clock, n in clocks.items()],
                                            ordered=False)
