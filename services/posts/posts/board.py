"""The board's reads: lists, search, the roadmap and statistics of a workspace's posts, as the
caller may see them; and the lookups sibling services make (which ids are posts, who votes for
them). Reads of many posts go through ``posts.reads`` (the engine ``POSTS_READ_ENGINE`` picks).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import timedelta

from bson import ObjectId
from bson.errors import InvalidId

from common import auth
from common.errors import BadRequest, Forbidden
from common.ids import now
from common.validation import check
from posts import access, contract, embeddings, schemas, shapes, text, triage
from posts.access import Access
from posts.config import PostsConfig
from posts.reads import Filters, Reads
from posts.readmodel import Workspaces
from posts.repository import PostRepository
from posts.scores import Scores

log = logging.getLogger(__name__)


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


class Board:
    def __init__(self, repo: PostRepository, access: Access, workspaces: Workspaces, scores: Scores, reads: Reads,
                 config: PostsConfig, embedder: embeddings.LazyEmbedder | None = None):
        self.repo = repo
        self.access = access
        self.workspaces = workspaces
        self.scores = scores
        self.reads = reads
        self.config = config
        self.embedder = embedder  # None: semantic search is off (POSTS_SEMANTIC_SEARCH)

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
            ws, board = self.workspaces.board(slug, query.board)
            if board is None:
                return {"items": []}  # a filter on a board that does not exist matches nothing
            board_id = board["id"]
        words = tuple(text.word_terms(query.q)) if query.q else ()
        filters = Filters(manager=manager, board=board_id, status=query.status,
                          moderation=query.moderation if manager else None, words=words, facets=tuple(facets))
        if sort == contract.TRENDING_SORT:
            docs = self._trending(slug, filters, query.limit, query.offset)
        else:
            docs = self.reads.page(slug, filters, sort, query.limit, query.offset)
        return {"items": self.access.shape(caller, slug, ws, docs)}

    def _trending(self, slug: str, filters: Filters, limit: int, offset: int) -> list[dict]:
        """A page of the trending order: the posts voted for in the last TRENDING_DAYS (at most
        TRENDING_MAX of them, the most voted lately), most recent votes first, then the others
        by votes (``top``). Two reads of the board's lists and one aggregation of the period's
        votes, an index range; a page past the recent ones reads the top order that far."""
        recent = self.repo.recent_votes(slug, now() - timedelta(days=contract.TRENDING_DAYS), contract.TRENDING_MAX)
        hot = []
        if recent:
            hot = self.reads.page(slug, replace(filters, only=frozenset(recent)), "top", len(recent), 0)
            hot.sort(key=lambda d: (recent[str(d["_id"])], d.get("voteCount", 0), d["_id"]), reverse=True)
        if offset + limit <= len(hot):
            return hot[offset:offset + limit]
        seen = {d["_id"] for d in hot}
        rest = [d for d in self.reads.page(slug, filters, "top", offset + limit, 0) if d["_id"] not in seen]
        return (hot + rest)[offset:offset + limit]

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
            ws, found = self.workspaces.board(slug, board)
            if found is None:
                return {"items": []}
            board_id = found["id"]
        manager = access.is_manager(caller, slug)
        matches = self.reads.search_candidates(slug, q, query_vector, manager, board_id, self.config.lexical_candidates)
        top = [m for m in matches if m.similarity >= self.config.min_similarity][:limit]
        docs = self.reads.documents([ObjectId(f"{m.entry.oid:024x}") for m in top])
        scores = {f"{m.entry.oid:024x}": m.similarity for m in top}
        shown = self.access.shape(caller, slug, ws, docs)
        return {"items": [{**item, "similarity": round(scores[item["id"]], 4)} for item in shown]}

    def roadmap(self, caller: auth.Caller, slug: str, board: str | None, limit: int) -> dict:
        ws = self.workspaces.get(slug)
        board_id = None
        if board:
            ws, found = self.workspaces.board(slug, board)
            if found is None:
                return {"columns": [{"status": ws.status_shape(s["slug"]), "items": []} for s in ws.statuses if s.get("roadmap", True)]}
            board_id = found["id"]
        shown = [status["slug"] for status in ws.statuses if status.get("roadmap", True)]  # the owner marks each
        columns = self.reads.roadmap(slug, shown, board_id, limit)  # public: listed posts only
        docs = [d for s in shown for d in columns[s]]
        settings = self.access.triage_of(slug, docs)
        # The caller's own votes, so each card's button says whether they voted (one query).
        voted = self.repo.voted_ids(access.identity(caller), [str(d["_id"]) for d in docs], []) if docs else set()
        return {"columns": [{"status": ws.status_shape(s),
                             "items": [shapes.roadmap_entry(d, settings, str(d["_id"]) in voted) for d in columns[s]]}
                            for s in shown]}

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
            ws, found = self.workspaces.board(slug, board)
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

    def activity(self, caller: auth.Caller, slug: str, days: int) -> dict:
        """What the workspace's people did each day of the last ``days`` (UTC, today included),
        oldest first, every day listed: posts written (neither merged away nor deleted), votes
        cast (still standing) and comments written (not deleted; private ones too): the team's."""
        auth.require_manager(caller, slug)
        self.workspaces.get(slug)
        today = now().replace(hour=0, minute=0, second=0, microsecond=0)
        since = today - timedelta(days=days - 1)
        counts = self.repo.activity(slug, since)
        dates = [(since + timedelta(days=n)).strftime("%Y-%m-%d") for n in range(days)]
        series = [{"date": d, **{name: counts[name].get(d, 0) for name in contract.ACTIVITY_COUNTS}} for d in dates]
        totals = {name: sum(day[name] for day in series) for name in contract.ACTIVITY_COUNTS}
        return {"days": days, "since": dates[0], "totals": totals, "series": series}

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

    # -- sibling services (internal routes) ---------------------------------------------------

    def in_use(self, body) -> dict:
        """Whether any post of the workspace, merged and unapproved ones too, is on the board
        ``boardId`` or in the status ``status`` (the workspaces service asks before deleting one)."""
        fields = check(body, schemas.IN_USE)
        used = {"boardId": fields["boardId"]} if "boardId" in fields else {"statusSlug": fields["status"]}
        return {"inUse": self.repo.any_post(fields["workspace"], used)}

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

    def export(self, body) -> dict:
        """One page of ``kind`` of a workspace for its export (internal: the portability service
        asks): posts, votes and comments in id order after ``after`` (deleted posts and comments
        left out, private comments in), or the triage settings' tags or fields whole."""
        fields = check(body, schemas.EXPORT)
        slug, kind, limit = fields["workspace"], fields["kind"], fields.get("limit", 500)
        if kind in ("tags", "fields"):
            return {"items": list(triage.Settings.from_doc(self.repo.triage_settings(slug)).shown(team=True)[kind]), "next": None}
        after = ObjectId(fields["after"]) if fields.get("after") and ObjectId.is_valid(fields["after"]) else None
        docs = self.repo.exported_after(slug, kind, after, limit)
        shape = {"posts": shapes.exported_post, "votes": shapes.exported_vote, "comments": shapes.exported_comment}[kind]
        return {"items": [shape(d) for d in docs], "next": str(docs[-1]["_id"]) if len(docs) == limit else None}

    def voters(self, body) -> dict:
        """Each of the workspace's posts among the ids: its title, whether anyone may see it
        (approved, not merged), and the persons whose votes count for it (internal; the
        notifications service ships a changelog entry to them)."""
        fields = check(body, schemas.LOOKUP)
        oids = [ObjectId(v) for v in fields["ids"] if ObjectId.is_valid(v)]
        posts = self.repo.posts_by_ids(fields["workspace"], oids) if oids else []
        voters = self.repo.person_voters(fields["workspace"], [str(p["_id"]) for p in posts])
        return {"items": [{"id": str(p["_id"]), "title": p["title"], "listed": bool(p.get("listed")),
                           "voters": sorted(voters.get(str(p["_id"]), ()))} for p in posts]}
