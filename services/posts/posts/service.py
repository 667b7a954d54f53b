"""The posts service's rules: posts, votes, comments, merges, search and the roadmap.

Every permission check of the service happens here, once, before the request body is
validated (a caller without the right learns nothing from validation). Each method returns
the response shape. Database commands are the repository's; a change others should hear of
commits in one unit of work with its outbox event.

Who may do what:
- managers (and the operator) see and do everything in their workspace;
- everyone else sees approved posts, and the posts they wrote in any moderation state;
- anonymous callers may submit, vote and comment only where the workspace's
  ``anonSubmit``/``anonVote``/``anonComment`` allow it (401 otherwise); SSO users may always;
- private comments are written and read by managers only.

Votes: one per identity and post; ``countsFor`` names the post whose ``voteCount`` includes it
(:class:`posts.models.Vote`). Merging A into B moves A's votes to B, except a voter who
already counts on B, whose vote on A is kept aside so nobody counts twice;
unmerging moves exactly A's votes back. Merging a merged post, into a merged post, or a post
others are merged into is 409; a post into itself 400.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import timedelta

from bson import ObjectId
from bson.errors import InvalidId
from pymongo.errors import DuplicateKeyError

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.ids import now, object_id
from common.person_directory import PersonDirectory
from common.db import Write
from common.validation import check
from posts import access, contract, embeddings, schemas, shapes, text, triage
from posts.config import PostsConfig
from posts.reads import Filters, Reads, open_reads
from posts.readmodel import Snapshot, Workspaces
from posts.repository import PostRepository
from posts.revenue import Revenue
from posts.scores import Scores

log = logging.getLogger(__name__)
ACTIONS = {"anonSubmit": "submit posts", "anonVote": "vote", "anonComment": "comment"}
# What a post written before triage holds in place of each triage field (no change: not changed).
_ABSENT = {"tags": [], "fields": {}, "owner": None, "eta": None}


@dataclass(frozen=True)
class ListQuery:
    board: str | None = None
    status: str | None = None
    q: str | None = None
    sort: str = contract.DEFAULT_SORT
    limit: int = contract.LIST_LIMIT[0]
    offset: int = 0
    moderation: str | None = None  # managers only, unless "approved"
    tags: tuple[str, ...] = ()  # every one of these tags
    owner: str | None = None  # the team only: the owner's user id
    fields: tuple[tuple[str, str], ...] = ()  # (key, value): select, multiselect and checkbox fields


class NotVoted(Exception):
    """Raised inside the unit of work to undo the counter when there was no vote to withdraw."""


class PostService:
    def __init__(self, repo: PostRepository, workspaces: Workspaces, config: PostsConfig,
                 embedder: embeddings.LazyEmbedder | None = None, reads: Reads | None = None,
                 people: PersonDirectory | None = None):
        self.repo = repo
        self.people = people  # addresses are the people service's: voters by email, the team's voter list
        self.workspaces = workspaces
        self.config = config
        self.embedder = embedder  # None: semantic search is off (POSTS_SEMANTIC_SEARCH)
        self.reads = reads if reads is not None else open_reads(repo, config)  # POSTS_READ_ENGINE
        self.scores = Scores(repo)
        self.revenue = Revenue(repo, self.scores)

    # -- who may ------------------------------------------------------------------------------

    def _participant(self, caller: auth.Caller, slug: str, flag: str) -> Snapshot:
        """The workspace, after checking that ``caller`` may submit, vote or comment (``flag``)."""
        if caller.kind != auth.ANONYMOUS:
            return self.workspaces.get(slug)
        # The flag as the owner stated it moments ago: one turned on or off just now counts,
        # whether or not its event has reached the read model.
        snapshot = self.workspaces.confirmed(slug, self.config.permission_max_age)
        if not snapshot.flags.get(flag, False):
            raise Unauthorized(
                f"this workspace does not let anonymous visitors {ACTIONS[flag]}: "
                "sign in (X-Feedback-User) or use a manager API key"
            )
        return snapshot

    def _board(self, slug: str, board_slug: str) -> tuple[Snapshot, dict | None]:
        """The workspace and its board ``board_slug`` (asking the owner once if it is new to us)."""
        ws = self.workspaces.ensure(slug, lambda s: s.board_by_slug(board_slug) is not None)
        return ws, ws.board_by_slug(board_slug)

    def _visible(self, caller: auth.Caller, slug: str, post_id: str, tx: PostRepository | None = None) -> dict:
        """The post, read in the unit of work ``tx`` if given; 404 when it does not exist or the
        caller may not see it (the two are one answer: a hidden post is not shown to exist)."""
        doc = (tx or self.repo).find_post(slug, object_id(post_id, "post"))
        if doc is None or not access.can_see(caller, slug, doc):
            raise NotFound(f"post '{post_id}' not found")
        return doc

    def _shape(self, caller: auth.Caller, slug: str, ws: Snapshot, docs: list[dict]) -> list[dict]:
        """Posts as ``caller`` sees them: ``voted`` from one query, private comments counted for managers."""
        live = [str(d["_id"]) for d in docs if not d.get("mergedInto")]
        merged = [d["_id"] for d in docs if d.get("mergedInto")]
        voted = self.repo.voted_ids(access.identity(caller), live, merged) if docs else set()
        manager = access.is_manager(caller, slug)
        settings = self._triage_of(slug, docs)
        return [shapes.post(d, ws, str(d["_id"]) in voted, manager, settings) for d in docs]

    def _triage_of(self, slug: str, docs: list[dict], tx: PostRepository | None = None) -> triage.Settings:
        """The settings that show these posts: read (current: which fields are internal) when
        one has tags or field values."""
        if any(d.get("tags") or d.get("fields") for d in docs):
            return self.scores.settings(slug, tx)
        return shapes.NO_TRIAGE

    # -- posts --------------------------------------------------------------------------------

    def create(self, caller: auth.Caller, slug: str, body) -> dict:
        self._participant(caller, slug, "anonSubmit")
        fields = check(body, schemas.CREATE_POST)
        ws, board = self._board(slug, fields["boardSlug"])
        if board is None:
            raise NotFound(f"field 'boardSlug': workspace '{slug}' has no board '{fields['boardSlug']}'")
        title = _title(fields["title"])
        if ws.default_status is None:
            raise BadRequest(f"workspace '{slug}' has no statuses to give a new post")
        new = new_post(slug, board["id"], title, fields["content"], ws.default_status, caller, **self._vector(title))
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> dict:
            # The new post's score and facets follow the settings as this unit of work reads
            # them (posts.scores). That read opens the transaction, so the writes go in one
            # client bulkWrite after it (a bulkWrite that opens a transaction carries the
            # transaction's readConcern, which the local stand-in refuses).
            doc = {**new, **self.scores.compiled(slug, tx.triage_settings(slug)).derived(new)}
            tx.add(*tx.insert_post(doc), tx.event(slug, contract.POST_CREATED, {"post": shapes.post_event(doc, ws), "actor": actor}))
            return doc

        doc = self.repo.unit_of_work(work)
        # Nobody has voted on a post that did not exist a moment ago: no votes query.
        return shapes.post(doc, ws, voted=False, manager=access.is_manager(caller, slug))

    def get(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        ws = self.workspaces.get(slug)
        return self._shape(caller, slug, ws, [self._visible(caller, slug, post_id)])[0]

    def list(self, caller: auth.Caller, slug: str, query: ListQuery) -> dict:
        ws = self.workspaces.get(slug)
        manager = access.is_manager(caller, slug)
        if query.moderation not in (None, contract.APPROVED) and not manager:
            raise Forbidden("only managers can list posts that are not approved")
        if query.sort in contract.TEAM_SORTS and not manager:
            raise Forbidden(f"only the team can sort by {query.sort}: it would tell what customers spend")
        if query.owner is not None and not manager:
            raise Forbidden("only the team can filter by owner")
        facets = [triage.TAG_FACET + t for t in query.tags]
        if query.owner is not None:
            facets.append(triage.OWNER_FACET + query.owner)
        sort = query.sort
        if query.fields or sort == contract.SCORE_SORT:
            settings = self.scores.settings(slug)
            facets += [triage.parse_filter(settings, key, value, manager) for key, value in query.fields]
            if sort == contract.SCORE_SORT and settings.version == 0:
                sort = "top"  # no formula saved: the score is the vote count (and older posts keep none)
        board_id = None
        if query.board:
            ws, board = self._board(slug, query.board)
            if board is None:
                return {"items": []}  # a filter on a board that does not exist matches nothing
            board_id = board["id"]
        words = tuple(text.word_terms(query.q)) if query.q else ()
        filters = Filters(manager=manager, board=board_id, status=query.status,
                          moderation=query.moderation if manager else None, words=words, facets=tuple(facets))
        docs = self.reads.page(slug, filters, sort, query.limit, query.offset)
        return {"items": self._shape(caller, slug, ws, docs)}

    def warm_up(self) -> None:
        """Load the sentence model (an API process does it at start, in the background), so the
        first search does not wait for it."""
        if self.embedder is not None:
            self.embedder.get()

    def update(self, caller: auth.Caller, slug: str, post_id: str, body) -> dict:
        auth.require_manager(caller, slug)
        fields = check(body, schemas.UPDATE_POST)
        ws = self.workspaces.get(slug)
        oid = object_id(post_id, "post")
        change: dict = {}
        if "title" in fields:
            change["title"] = _title(fields["title"])
        if "content" in fields:
            change["content"] = fields["content"]
        if "statusSlug" in fields:
            wanted = fields["statusSlug"]
            ws = self.workspaces.ensure(slug, lambda s: s.status(wanted) is not None)
            if ws.status(wanted) is None:
                raise NotFound(f"field 'statusSlug': workspace '{slug}' has no status '{wanted}'")
            change["statusSlug"] = wanted
        if "moderationState" in fields:
            change["moderationState"] = fields["moderationState"]
        if "eta" in fields:
            change["eta"] = fields["eta"]
        if "owner" in fields:
            change["owner"] = self._owner(slug, fields["owner"])
        vector = self._vector(change["title"]) if "title" in change else {}  # not inside the unit of work
        actor = auth.actor(caller)
        triaged = {"tags", "fields", "owner"} & set(fields)  # what the score and the facets follow

        def work(tx: PostRepository) -> dict:
            before = tx.find_post(slug, oid)
            if before is None:
                raise NotFound(f"post '{post_id}' not found")
            settings = self.scores.settings(slug, tx) if triaged else None
            if "tags" in fields:
                change["tags"] = triage.check_tags(settings, fields["tags"])
            if "fields" in fields:
                given = {**(before.get("fields") or {}), **triage.check_values(settings, fields["fields"])}
                change["fields"] = {k: v for k, v in given.items() if v is not None}
            changed = {k: v for k, v in change.items() if before.get(k, _ABSENT.get(k)) != v}
            if not changed:
                return before
            update = dict(changed, updatedAt=now())
            if "title" in changed or "content" in changed:
                title, content = changed.get("title", before["title"]), changed.get("content", before.get("content", ""))
                update["terms"], update["titleTerms"] = text.index_terms(title, content)
            if "title" in changed:
                update.update(vector)
            if "moderationState" in changed:
                update["listed"] = changed["moderationState"] == contract.APPROVED and not before.get("mergedInto")
            if "statusSlug" in changed:
                update["statusChangedBy"], update["statusChangedAt"] = actor, update["updatedAt"]
            if settings is not None and triaged & set(changed):
                update.update(settings.derived({**before, **update}))
            after = {**before, **update}
            if {"title", "moderationState"} & set(changed):
                tx.add(*tx.relink(after))
            shape = shapes.post_event(after, ws, settings or self._triage_of(slug, [after], tx))
            tx.add(*tx.edit_post(before, update))
            others = sorted(set(changed) - {"statusSlug"})
            if others:
                tx.add(tx.event(slug, contract.POST_UPDATED, {"post": shape, "changed": others, "actor": actor}))
            if "statusSlug" in changed:
                old = ws.status_shape(before["statusSlug"])
                data = {"post": shape, "oldStatus": old, "newStatus": shape["status"], "actor": actor,
                        "notify": fields.get("notify", True)}
                tx.add(tx.event(slug, contract.POST_STATUS_CHANGED, data))
            return after

        doc = self.repo.unit_of_work(work)
        return self._shape(caller, slug, ws, [doc])[0]

    def _owner(self, slug: str, user: str | None) -> dict | None:
        """A post's owner: a member of the workspace's team, as ``{id, name}``."""
        if user is None:
            return None
        if self.people is None:
            raise BadRequest("this deployment has no people service: posts have no owners")
        member = next((m for m in self.people.team(slug) if m["id"] == user), None)
        if member is None:
            raise NotFound(f"field 'owner': '{user}' is not a member of this workspace's team")
        return {"id": user, "name": member.get("name") or member.get("email")}

    def _vector(self, title: str) -> dict:
        """The title vector fields of a post with ``title`` (none when semantic search is off:
        the backfill gives it one when it is turned on)."""
        if self.embedder is None:
            return {"embedding": None, "embeddingModel": None}
        vector = self.embedder.titles([title])[0]
        return {"embedding": embeddings.to_stored(vector), "embeddingModel": embeddings.MODEL}

    def search(self, caller: auth.Caller, slug: str, q: str, board: str | None, limit: int) -> dict:
        ws = self.workspaces.get(slug)
        q = q.strip()
        if not q:
            raise BadRequest("query parameter 'q' is required")
        if len(q) > contract.SEARCH_QUERY_MAX:
            raise BadRequest(f"query parameter 'q' must be at most {contract.SEARCH_QUERY_MAX} characters")
        query_vector = self.embedder.titles([q])[0] if self.embedder is not None else None
        if query_vector is None and not text.query_terms(q):
            return {"items": []}
        board_id = None
        if board:
            ws, found = self._board(slug, board)
            if found is None:
                return {"items": []}
            board_id = found["id"]
        manager = access.is_manager(caller, slug)
        matches = self.reads.search_candidates(slug, q, query_vector, manager, board_id, self.config.lexical_candidates)
        top = [m for m in matches if m.similarity >= self.config.min_similarity][:limit]
        docs = self.reads.documents([ObjectId(f"{m.entry.oid:024x}") for m in top])
        scores = {f"{m.entry.oid:024x}": m.similarity for m in top}
        return {"items": [{**item, "similarity": round(scores[item["id"]], 4)} for item in self._shape(caller, slug, ws, docs)]}

    def roadmap(self, caller: auth.Caller, slug: str, board: str | None, limit: int) -> dict:
        ws = self.workspaces.get(slug)
        board_id = None
        if board:
            ws, found = self._board(slug, board)
            if found is None:
                return {"columns": [{"status": ws.status_shape(s["slug"]), "items": []} for s in ws.statuses if s.get("roadmap", True)]}
            board_id = found["id"]
        shown = [status["slug"] for status in ws.statuses if status.get("roadmap", True)]  # the owner marks each
        columns = self.reads.roadmap(slug, shown, board_id, limit)  # public: listed posts only
        return {"columns": [{"status": ws.status_shape(s), "items": [shapes.roadmap_entry(d) for d in columns[s]]} for s in shown]}

    def stats(self, caller: auth.Caller, slug: str, board: str | None, stalled_days: int, top: int) -> dict:
        """Board statistics over the posts the caller's lists show (listed ones; for managers
        every post not merged), exact over the whole board: counts by status, the ``top`` most
        voted and newest, and the posts stalled for more than ``stalled_days`` (the last public
        comment is a non-team member's: a customer spoke last and the team has not answered),
        oldest first, at most ``contract.STALLED_MAX``. Two database commands whatever the
        board's size: one aggregation, one index range."""
        ws = self.workspaces.get(slug)
        manager = access.is_manager(caller, slug)
        answer = {"board": board, "postsCounted": 0, "byStatus": {}, "topVoted": [], "newest": [],
                  "stalled": [], "moreStalled": False, "stalledDays": stalled_days}
        board_id = None
        if board:
            ws, found = self._board(slug, board)
            if found is None:
                return answer  # as lists: a board that does not exist has no posts
            board_id = found["id"]
        at = now()
        figures = self.repo.board_stats(slug, not manager, board_id, top)
        waiting = self.repo.awaiting_reply(slug, not manager, board_id, at - timedelta(days=stalled_days), contract.STALLED_MAX + 1)
        counts = sorted(((c["_id"], c["n"]) for c in figures["byStatus"]), key=lambda sn: (-sn[1], sn[0]))
        return {
            **answer,
            "postsCounted": sum(n for _, n in counts),
            "byStatus": dict(counts),
            "topVoted": [shapes.brief(d, manager) for d in figures["topVoted"]],
            "newest": [shapes.brief(d, manager) for d in figures["newest"]],
            "stalled": [shapes.stalled(d, manager, at) for d in waiting[:contract.STALLED_MAX]],
            "moreStalled": len(waiting) > contract.STALLED_MAX,
        }

    def backfill_last_comments(self) -> None:
        """Once per database: give posts written before posts kept their last public comment
        that comment's time and author kind (board statistics find stalled posts by them).
        An API process runs it at start; until it has, those posts are never stalled."""
        try:
            if not self.repo.last_comments_backfilled():
                changed = self.repo.backfill_last_comments()
                log.info("gave %d posts their last public comment", changed)
        except Exception:  # noqa: BLE001 - the next process start tries again
            log.warning("could not backfill the posts' last public comments", exc_info=True)

    def lookup(self, body) -> dict:
        """Which of the ids are posts of the workspace (the workspaces service checks changelog postIds)."""
        fields = check(body, schemas.LOOKUP)
        oids = []
        for value in fields["ids"]:
            try:
                oids.append(ObjectId(value))
            except (InvalidId, TypeError):
                continue
        found = self.repo.existing_ids(fields["workspace"], oids) if oids else set()
        return {"found": [i for i in fields["ids"] if i in found]}

    def voters(self, body) -> dict:
        """Each of the workspace's posts among the ids: its title, whether anyone may see it
        (approved, not merged), and the persons whose votes count for it (internal)."""
        fields = check(body, schemas.LOOKUP)
        oids = [ObjectId(v) for v in fields["ids"] if ObjectId.is_valid(v)]
        posts = self.repo.posts_by_ids(fields["workspace"], oids) if oids else []
        voters = self.repo.person_voters(fields["workspace"], [str(p["_id"]) for p in posts])
        return {"items": [{"id": str(p["_id"]), "title": p["title"], "listed": bool(p.get("listed")),
                           "voters": sorted(voters.get(str(p["_id"]), ()))} for p in posts]}

    # -- votes --------------------------------------------------------------------------------

    def vote(self, caller: auth.Caller, slug: str, post_id: str) -> tuple[dict, bool]:
        """Cast the caller's vote; return ``(post, created)`` (voting twice changes nothing).

        Four round trips in one transaction: reading the post; reading the voter's companies
        (posts.revenue; none for an anonymous visitor); the vote, the post's counters and the
        outbox event together; the commit. A member of companies new to the post adds one
        round trip for their counts and one for their spend."""
        ws = self._participant(caller, slug, "anonVote")
        doc, created = self._cast(caller, slug, post_id, access.identity(caller), {"name": caller.name})
        return shapes.post(doc, ws, True, access.is_manager(caller, slug), self._triage_of(slug, [doc])), created

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
        post = self._visible(caller, slug, post_id)
        return {"items": self._voters(slug, self.repo.counted_votes(str(post["_id"]), limit, offset))}

    def _voters(self, slug: str, votes: list[dict]) -> list[dict]:
        persons = self.people.persons([v["userId"] for v in votes]) if self.people is not None else {}
        companies = self.repo.companies_by_id(slug, sorted({c for v in votes for c in v.get("companies", ())}))
        return [shapes.voter(v, persons.get(v["userId"]), companies) for v in votes]

    def _cast(self, caller: auth.Caller, slug: str, post_id: str, user: str, extra: dict) -> tuple[dict, bool]:
        """Cast ``user``'s vote (with ``extra`` fields); ``(post, created)``."""
        oid = object_id(post_id, "post")

        def work(tx: PostRepository) -> dict:
            doc = self._votable(tx, caller, slug, post_id)
            companies, touched = self.revenue.voter(tx, slug, user)
            revenue, counted = self.revenue.count(tx, slug, post_id, companies, 1)
            doc, count = self._counted(tx, slug, doc, 1, revenue)
            event = {"postId": post_id, "userId": user, "voteCount": doc["voteCount"]}
            # A second vote by the same identity hits the unique index and aborts the count too.
            tx.add(tx.insert_vote(workspace=slug, postId=oid, userId=user, countsFor=post_id, companies=companies,
                                  createdAt=now(), **extra),
                   *touched, *counted, *count, tx.event(slug, contract.VOTE_CREATED, event))
            return doc

        try:
            return self.repo.unit_of_work(work, hot_key=post_id), True
        except DuplicateKeyError:
            # Voted already (on this post, or on a post merged into it): nothing changes.
            return self._visible(caller, slug, post_id), False

    def unvote(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """Withdraw the caller's vote for this post (and for the posts merged into it)."""
        ws = self._participant(caller, slug, "anonVote")
        user = access.identity(caller)

        def work(tx: PostRepository) -> dict:
            doc = self._votable(tx, caller, slug, post_id)
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

        try:
            doc = self.repo.unit_of_work(work, hot_key=post_id)
        except NotVoted:
            doc = self._visible(caller, slug, post_id)  # had not voted: nothing changes
        return shapes.post(doc, ws, False, access.is_manager(caller, slug), self._triage_of(slug, [doc]))

    def _counted(self, tx: PostRepository, slug: str, doc: dict, step: int, revenue: int) -> tuple[dict, list[Write]]:
        """The post with one vote more (``step`` 1) or less (-1) and its revenue moved by
        ``revenue`` cents, scored; and the writes that store it."""
        after = {**doc, "voteCount": doc["voteCount"] + step, "revenueCents": doc.get("revenueCents", 0) + revenue}
        scored = self.scores.of(tx, slug, after)
        return {**after, **scored}, tx.count_vote(doc, step, revenue, scored)

    def _votable(self, tx: PostRepository, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """The post as the unit of work reads it; refuse (and so abort) when it is unknown,
        invisible to the caller, or merged."""
        doc = self._visible(caller, slug, post_id, tx)
        if doc.get("mergedInto"):
            into = doc["mergedInto"]
            raise Conflict(f"post '{post_id}' is merged into '{into['id']}'; vote on that post instead")
        return doc

    # -- comments -----------------------------------------------------------------------------

    def comment(self, caller: auth.Caller, slug: str, post_id: str, body) -> dict:
        """Add a comment. A private one is the team's: non-managers never see it, and its
        ``comment.created`` event says ``isPrivate: true``."""
        self._participant(caller, slug, "anonComment")
        fields = check(body, schemas.CREATE_COMMENT)
        manager = access.is_manager(caller, slug)
        private = bool(fields.get("isPrivate", False))
        if private and not manager:
            raise Forbidden("only managers can write private comments")
        oid = object_id(post_id, "post")
        parent = self._parent(caller, slug, oid, fields.get("parentId"))
        if parent is not None and parent.get("isPrivate"):
            private = True  # a reply in a private thread stays private
        comment_id = ObjectId()
        doc = self.repo.new_comment(
            id=comment_id,
            workspace=slug,
            postId=oid,
            parentId=str(parent["_id"]) if parent else None,
            path=f"{parent['path']}/{comment_id}" if parent else str(comment_id),
            depth=parent["depth"] + 1 if parent else 0,
            content=fields["content"],
            authorId=access.identity(caller),
            isTeamMember=manager,
            authorName=access.team_name(caller, slug),
            isPrivate=private,
            createdAt=now(),
        )

        def work(tx: PostRepository) -> None:
            post = self._visible(caller, slug, post_id, tx)
            event = {"comment": shapes.comment(doc), "post": {"id": post_id, "title": post["title"]}, "actor": auth.actor(caller)}
            # Who spoke last in public (board statistics' stalled posts). A retried unit of work
            # may commit after a later comment did: that one stays the last.
            last = not private and (post.get("lastCommentAt") is None or post["lastCommentAt"] <= doc["createdAt"])
            tx.add(tx.insert_comment(doc), *tx.count_comment(post, doc, last), tx.event(slug, contract.COMMENT_CREATED, event))

        self.repo.unit_of_work(work, hot_key=post_id)
        return shapes.comment(doc)

    def comments(self, caller: auth.Caller, slug: str, post_id: str, limit: int, offset: int) -> dict:
        self.workspaces.get(slug)
        post = self._visible(caller, slug, post_id)
        docs = self.repo.comment_page(post["_id"], access.is_manager(caller, slug), offset, limit)
        return {"items": [shapes.comment(d) for d in docs]}

    def _parent(self, caller: auth.Caller, slug: str, post_oid: ObjectId, parent_id: str | None) -> dict | None:
        if parent_id is None:
            return None
        try:
            parent_oid = ObjectId(parent_id)
        except (InvalidId, TypeError):
            raise NotFound(f"field 'parentId': no comment '{parent_id}' on this post") from None
        parent = self.repo.find_comment(slug, parent_oid)
        if parent is None or (parent.get("isPrivate") and not access.is_manager(caller, slug)):
            raise NotFound(f"field 'parentId': no comment '{parent_id}' on this post")
        if parent["postId"] != post_oid:
            raise NotFound(f"field 'parentId': comment '{parent_id}' belongs to another post")
        if parent.get("depth", 0) + 1 > contract.MAX_COMMENT_DEPTH:
            # The reply is well formed; the thread it joins is too deep: a conflict with what exists.
            raise Conflict(f"field 'parentId': threads nest at most {contract.MAX_COMMENT_DEPTH} levels deep")
        return parent

    # -- merges -------------------------------------------------------------------------------

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
            settings = self._triage_of(slug, [a_after, b_after], tx)
            data = {"post": shapes.post_event(a_after, ws, settings), "into": shapes.post_event(b_after, ws, settings), "actor": actor}
            tx.add(*b_tally, *a_tally, tx.close_suggestions_of(slug, a_id, actor),
                   *tx.merge_post(a, into, a_scored, stamp),
                   *tx.add_merged(b, entry, moved, b_revenue, b_scored, stamp),
                   tx.event(slug, contract.POST_MERGED, data))
            return a_after

        doc = self.repo.unit_of_work(work)
        return self._shape(caller, slug, ws, [doc])[0]

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
            tx.add(*tx.unmerge_post(a, moved + kept, listed, a_revenue, a_scored, stamp))
            b = tx.find_post(slug, ObjectId(b_id))
            b_after = None
            if b is not None:
                b_revenue, b_tally = self.revenue.retally(tx, slug, b_id)
                b_after = {**b, "voteCount": b.get("voteCount", 0) - moved, "revenueCents": b_revenue, "updatedAt": stamp,
                           "mergedPosts": [m for m in b.get("mergedPosts", []) if m["id"] != a_id]}
                b_scored = self.scores.of(tx, slug, b_after)
                b_after.update(b_scored)
                tx.add(*b_tally, *tx.remove_merged(b, a_id, moved, b_revenue, b_scored, stamp))
            settings = self._triage_of(slug, [a_after, b_after] if b_after else [a_after], tx)
            data = {"post": shapes.post_event(a_after, ws, settings),
                    "from": shapes.post_event(b_after, ws, settings) if b_after else None, "actor": auth.actor(caller)}
            tx.add(tx.event(slug, contract.POST_UNMERGED, data))
            return a_after

        doc = self.repo.unit_of_work(work)
        return self._shape(caller, slug, ws, [doc])[0]

    # -- triage settings ----------------------------------------------------------------------

    def triage_settings(self, caller: auth.Caller, slug: str) -> dict:
        """The workspace's tags and public fields (everyone: the board shows them); its internal
        fields and score formula (the team)."""
        self.workspaces.get(slug)
        return self.scores.settings(slug).shown(access.is_manager(caller, slug))

    def save_triage(self, caller: auth.Caller, slug: str, body) -> dict:
        """Replace the workspace's triage settings; its posts are rescored after (posts.scores)."""
        auth.require_manager(caller, slug)
        stored = triage.check_settings(check(body, schemas.TRIAGE))
        self.workspaces.get(slug)
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> triage.Settings:
            current = tx.triage_settings(slug)
            settings = triage.Settings(version=(current or {}).get("version", 0) + 1, tags=tuple(stored["tags"]),
                                       fields=tuple(stored["fields"]), formula_text=stored["scoreFormula"])
            tx.add(*tx.save_triage(slug, settings.version, stored),
                   tx.event(slug, contract.TRIAGE_UPDATED, {"settings": settings.shown(True), "actor": actor}))
            return settings

        return self.repo.unit_of_work(work, hot_key=f"triage {slug}").shown(True)

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

    def _existing(self, tx: PostRepository, slug: str, oid: ObjectId) -> dict:
        doc = tx.find_post(slug, oid)
        if doc is None:
            raise NotFound(f"post '{oid}' not found")
        return doc


def new_post(slug: str, board_id: str, title: str, content: str, status: str, caller: auth.Caller, **vector) -> dict:
    """A new post's document (the benchmark seeds with it too); ``vector``: its title vector
    fields (``embedding``, ``embeddingModel``), none for a post the backfill is to embed."""
    terms, title_terms = text.index_terms(title, content)
    created = now()
    return PostRepository.new_post(
        workspace=slug,
        boardId=board_id,
        title=title,
        content=content,
        statusSlug=status,
        verified=access.verified(caller),
        moderationState=contract.APPROVED,
        authorId=access.identity(caller),
        mergedInto=None,
        terms=terms,
        titleTerms=title_terms,
        createdAt=created,
        updatedAt=created,
        **vector,
    )


def suggestion_id(slug: str, a: str, b: str) -> str:
    """One id per workspace and pair of posts, whichever is the newer."""
    return hashlib.sha256(" ".join([slug, *sorted((a, b))]).encode()).hexdigest()[:24]


def _title(title: str) -> str:
    title = title.strip()
    if not title:
        raise BadRequest("field 'title' must not be blank")
    return title
