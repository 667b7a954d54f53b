"""The two read engines behind ``posts.reads.Reads`` (docs/services/posts.md, "Reads")."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
from bson import ObjectId

from posts import similarity, text
from posts.reads import Filters
from posts.reads.cache import ADOPT_SECONDS, IndexCache
from posts.reads.index import Entry, WorkspaceIndex, oid_hex
from posts.triage import TAG_FACET

log = logging.getLogger(__name__)


class MongoReads:
    """Plain queries on the compound indexes of ``posts.models.Post``: on real MongoDB each is
    an index walk in the sort's order that stops at the page (``queries`` are what the explain
    test runs). Search candidates come from a cache of unordered query indexes."""

    def __init__(self, repo, budget: int, ordered: bool = False, background: bool = True):
        self.repo = repo
        self.cache = IndexCache(repo, budget, ordered=ordered, background=background)

    def start(self) -> None:
        pass  # nothing to warm: a cold page is an index walk, and search builds on first use

    def ready(self) -> bool:
        return True

    def queries(self, slug: str, filters: Filters, sort: str, limit: int, offset: int):
        """The cursor a page runs (unexecuted), for the explain test."""
        return self.repo.page_cursor(slug, filters, sort, offset, limit)

    def page(self, slug: str, filters: Filters, sort: str, limit: int, offset: int) -> list[dict]:
        return list(self.queries(slug, filters, sort, limit, offset))

    def roadmap_queries(self, slug: str, statuses: list[str], board: str | None, limit: int) -> dict:
        return {s: self.repo.page_cursor(slug, Filters(board=board, status=s), "top", 0, limit, roadmap=True) for s in statuses}

    def roadmap(self, slug: str, statuses: list[str], board: str | None, limit: int) -> dict[str, list[dict]]:
        return {s: list(cursor) for s, cursor in self.roadmap_queries(slug, statuses, board, limit).items()}

    def build_now(self, slug: str) -> None:
        if self.cache.fresh(slug) is None:
            self.cache.build(slug)  # a background build finding it there skips

    def documents(self, oids: list[ObjectId]) -> list[dict]:
        found = self.repo.posts_by_id(oids) if oids else {}
        return [found[o] for o in oids if o in found]

    def search_candidates(self, slug: str, q: str, vector: np.ndarray | None, manager: bool, board: str | None,
                          lexical: int) -> list[similarity.Match]:
        index = self.cache.fresh(slug)
        if index is None:
            # Not built yet (its build is queued): the posts sharing the query's terms, read
            # from the database, scored alike; no nearest titles until the index is there.
            terms = text.query_terms(q)
            if not terms:
                return []
            index = WorkspaceIndex(self.repo.sharing_terms(slug, terms, manager, board, lexical), {}, ordered=False)
        return similarity.rank(index, q, vector, manager=manager, board=board, lexical_candidates=lexical)


class MemoryReads(MongoReads):
    """Pages and the roadmap from each workspace's query index, in the bounded cache; a workspace
    whose index is not built yet (or does not fit the budget) is read as :class:`MongoReads`
    reads it."""

    def __init__(self, repo, budget: int, background: bool = True, warm_up_seconds: float = 120.0):
        super().__init__(repo, budget, ordered=True, background=background)
        self.warm_up_seconds = warm_up_seconds

    def start(self) -> None:
        threading.Thread(target=self._keep_warm, name="query-index-warm-up", daemon=True).start()

    def _keep_warm(self) -> None:
        self.cache.warm_up(self.warm_up_seconds)
        while True:
            time.sleep(ADOPT_SECONDS)
            try:
                self.cache.adopt()
            except Exception:  # noqa: BLE001 - the database is down: the next round tries again
                log.warning("could not look for indexes to adopt", exc_info=True)

    def ready(self) -> bool:
        return self.cache.warm.is_set()

    def page(self, slug: str, filters: Filters, sort: str, limit: int, offset: int) -> list[dict]:
        index = self.cache.fresh(slug)
        if index is None:
            return super().page(slug, filters, sort, limit, offset)
        entries = index.page(sort, filters.manager, offset, limit, board=filters.board, status=filters.status,
                             moderation=filters.moderation if filters.manager else None, words=list(filters.words),
                             facets=list(filters.facets),
                             only={int(i, 16) for i in filters.only} if filters.only is not None else None)
        return self.documents([ObjectId(oid_hex(e.oid)) for e in entries])

    def roadmap(self, slug: str, statuses: list[str], board: str | None, limit: int) -> dict[str, list[dict]]:
        index = self.cache.fresh(slug)
        if index is None:
            return super().roadmap(slug, statuses, board, limit)
        return {s: [_roadmap_doc(e) for e in entries] for s, entries in index.roadmap(statuses, board, limit).items()}


def _roadmap_doc(entry: Entry) -> dict:
    tags = [f[len(TAG_FACET):] for f in entry.facets if f.startswith(TAG_FACET)]
    return {"_id": ObjectId(oid_hex(entry.oid)), "title": entry.title, "voteCount": entry.votes, "tags": tags, "eta": entry.eta}
