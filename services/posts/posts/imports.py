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
from datetime import datetime, timezone

from bson import ObjectId
from pymongo.errors import DuplicateKeyError

from common.validation import check
from posts import contract, schemas, text, triage
from posts.repository import SHADOW, PostRepository, clock_id, CLOCKS
from posts.revenue import Revenue
from posts.scores import Scores

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
        if kind == "tags":
            return self._tags(slug, items)
        if kind == "votes":
            self._votes_batch(slug, source, items, touched, ids, errors)
            items = []
        for item in items:
            try:
                our = getattr(self, "_" + kind)(slug, source, item, touched)
                if our is not None:
                    ids[str(item["sourceId"])] = our
            except (KeyError, ValueError, TypeError, LookupError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        self.recount_all(slug, touched)
        return {"ids": ids, "errors": errors}

    # -- tags: the workspace's triage settings gain the ones it lacks -----------------------------

    def _tags(self, slug: str, items: list[dict]) -> dict:
        def work(tx: PostRepository) -> dict[str, str]:
            current = tx.triage_settings(slug) or {}
            tags = list(current.get("tags", []))
            known = {t["slug"] for t in tags}
            ids = {}
            for item in items:
                slug_ = tag_slug(item.get("slug") or item["name"])
                ids[str(item["sourceId"])] = slug_
                if slug_ not in known and len(tags) < contract.MAX_TAGS:
                    known.add(slug_)
                    tags.append({"slug": slug_, "name": str(item["name"])[:40] or slug_, "color": TAG_COLORS[0]})
            if len(tags) != len(current.get("tags", [])):
                stored = {"tags": tags, "fields": current.get("fields", []), "scoreFormula": current.get("scoreFormula")}
                version = current.get("version", 0) + 1
                settings = triage.Settings(version=version, tags=tuple(tags), fields=tuple(stored["fields"]),
                                           formula_text=stored["scoreFormula"])
                # Configuration, not history: triage.updated rescores the workspace as after a save.
                tx.add(*tx.save_triage(slug, version, stored),
                       tx.event(slug, contract.TRIAGE_UPDATED, {"settings": settings.shown(True), "actor": None}))
            return ids

        return {"ids": self.repo.unit_of_work(work, hot_key=f"triage {slug}"), "errors": []}

    # -- posts ----------------------------------------------------------------------------------

    def _posts(self, slug: str, source: str, item: dict, touched: set) -> str:
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
                  "updatedAt": created, "changedAt": time.time_ns()}
        existing = self.repo.posts.find_one({"workspace": slug, "importKey": key}, projection={"_id": 1})
        if existing is not None:
            # Its tags or owner may have changed: the facets follow (the score follows in the recount).
            values["facets"] = self.scores.settings(slug).facets(values)
            self.repo.posts.update_one({"_id": existing["_id"]}, {"$set": values})
            oid = existing["_id"]
        else:
            doc = PostRepository.new_post(workspace=slug, verified=False, moderationState=contract.APPROVED, mergedInto=None,
                                          importKey=key, **{k: v for k, v in values.items() if k != "changedAt"})
            settings = self.scores.settings(slug)
            doc.update(settings.derived(doc))
            try:
                self.repo.posts.insert_one(doc)
            except DuplicateKeyError:  # another run inserted it a moment ago: update that one
                return self._posts(slug, source, item, touched)
            oid = doc["_id"]
        self._tick(slug, oid)
        touched.add(oid)
        return str(oid)

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
        for oid in (post, into):
            self._tick(slug, oid)
            touched.add(oid)
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
        touched.add(ObjectId(counts_for))
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
        the votes already there), then one write each: the same outcome as one vote at a time."""
        wanted = []
        for item in items:
            try:
                wanted.append((item, ObjectId(item["postId"]), str(item["userId"])))
            except (KeyError, TypeError, ValueError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        post_oids = list({oid for _, oid, _ in wanted})
        users = list({user for _, _, user in wanted})
        posts = {d["_id"]: d for d in self.repo.posts.find({"_id": {"$in": post_oids}, "workspace": slug}, projection={"mergedInto": 1})}
        companies = {d["userId"]: d.get("companies", []) for d in self.repo.member_views.find(
            {"_id": {"$in": [f"{slug} {u}" for u in users]}})}
        existing = {(d["postId"], d["userId"]): d for d in self.repo.votes.find(
            {"postId": {"$in": post_oids}, "userId": {"$in": users}}, projection={"postId": 1, "userId": 1, "countsFor": 1})}
        targets = {str(p["mergedInto"]["id"]) if p.get("mergedInto") else str(oid) for oid, p in posts.items()}
        counted = {(d["countsFor"], d["userId"]): d["_id"] for d in self.repo.votes.find(
            {"countsFor": {"$in": list(targets)}, "userId": {"$in": users}}, projection={"countsFor": 1, "userId": 1})}
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
            try:
                if found is None:
                    self.repo.votes.insert_one({"_id": vote_id, **doc, "importKey": import_key(slug, source, item["sourceId"])})
                else:
                    self.repo.votes.update_one({"_id": vote_id}, {"$set": doc})
            except DuplicateKeyError:  # written meanwhile (another run): one at a time settles it
                vote_id = ObjectId(self._votes(slug, source, item, touched))
            existing[(post_oid, user)] = {"_id": vote_id}
            if place == counts_for:
                counted[(counts_for, user)] = vote_id
            ids[str(item["sourceId"])] = str(vote_id)
            touched.add(ObjectId(counts_for))

    # -- comments -------------------------------------------------------------------------------

    def _comments(self, slug: str, source: str, item: dict, touched: set) -> str:
        post_oid = ObjectId(item["postId"])
        if self.repo.posts.find_one({"_id": post_oid, "workspace": slug}, projection={"_id": 1}) is None:
            raise LookupError("its post was not imported")
        content = str(item.get("content") or "").strip()
        if not content:
            raise ValueError("the comment is empty")
        key = import_key(slug, source, item["sourceId"])
        parent = None
        if item.get("parentSourceId"):
            parent = self.repo.comments.find_one({"workspace": slug, "importKey": import_key(slug, source, item["parentSourceId"])})
            if parent is None:
                # The importer sends such a comment again once the rest of its thread is in.
                raise LookupError("parent-missing: the comment it answers is not imported yet")
        existing = self.repo.comments.find_one({"workspace": slug, "importKey": key}, projection={"_id": 1})
        oid = existing["_id"] if existing else ObjectId()
        author = item.get("author")
        values = {"workspace": slug, "postId": post_oid, "parentId": str(parent["_id"]) if parent else None,
                  "path": f"{parent['path']}/{oid}" if parent else str(oid), "depth": parent["depth"] + 1 if parent else 0,
                  "content": content, "authorId": item.get("authorId") or "anonymous",
                  "isTeamMember": bool((author or {}).get("team")), "author": author,
                  "authorName": (author or {}).get("name") if (author or {}).get("team") else None,
                  "isPrivate": bool(item.get("isPrivate")), "createdAt": parse_time(item.get("createdAt")), "importKey": key}
        self.repo.comments.update_one({"_id": oid}, {"$set": values}, upsert=True)
        touched.add(post_oid)
        return str(oid)

    # -- counts ---------------------------------------------------------------------------------

    def recount_all(self, slug: str, oids: set[ObjectId]) -> None:
        """Each post's comments counted for all of them at once (one read), then each post's
        votes, revenue and score in its own short transaction."""
        if not oids:
            return
        tally: dict[ObjectId, dict] = {oid: {"public": 0, "private": 0, "last": None} for oid in oids}
        for c in self.repo.comments.find({"postId": {"$in": list(oids)}, "deletedAt": None},
                                         projection={"postId": 1, "isPrivate": 1, "createdAt": 1, "isTeamMember": 1}):
            counts = tally[c["postId"]]
            if c.get("isPrivate"):
                counts["private"] += 1
                continue
            counts["public"] += 1
            if counts["last"] is None or c["createdAt"] > counts["last"]["createdAt"]:
                counts["last"] = c
        for oid, counts in tally.items():
            self.recount(slug, oid, counts["public"], counts["private"], counts["last"])

    def recount(self, slug: str, oid: ObjectId, public: int, private: int, last: dict | None) -> None:
        """Votes, comments (as counted), revenue and score of the post, from what is stored."""
        pid = str(oid)

        def work(tx: PostRepository) -> None:
            post = tx.posts_in(slug, [pid]).get(pid)
            if post is None:
                return
            votes = tx.votes.count_documents({"countsFor": pid}, session=tx.session)
            revenue, writes = self.revenue.retally(tx, slug, pid)
            counted = {**post, "voteCount": votes, "revenueCents": 0 if post.get("mergedInto") else revenue}
            values = {"voteCount": votes, "revenueCents": counted["revenueCents"], "commentCount": public,
                      "privateCommentCount": private, **self.scores.of(tx, slug, counted),
                      "listed": post.get("moderationState") == contract.APPROVED and not post.get("mergedInto")}
            if last is not None:
                values.update(lastCommentAt=last["createdAt"], lastCommentByTeam=bool(last.get("isTeamMember")))
            tx.add(*writes, *tx._update_post(slug, oid, {"$set": values}))

        self.repo.unit_of_work(work, hot_key=pid)

    def _tick(self, slug: str, oid: ObjectId) -> None:
        self.repo.clock_docs.update_one({"_id": clock_id(slug, int(str(oid), 16) % CLOCKS)}, {"$inc": {"n": 1}}, upsert=True)
