"""The posts service's reads: one interface, two engines (docs/services/posts.md, "Reads").

:class:`Reads` is every read of many posts the service makes: a page of a list, the roadmap's
columns, the candidates of a similarity search, and the documents of chosen posts. Each
answer is fresh: it reflects every write committed before the call, whichever API process
made it. The concepts that read many posts (``posts.board``; ``posts.merges``, comparing a
new post) keep the rules and call this interface; the engine is chosen by
``POSTS_READ_ENGINE``:

- ``mongo`` (``posts.reads.engines.MongoReads``): plain queries on the compound indexes of
  ``posts.models.Post``, one per sort and population, so a page costs what it returns on real
  MongoDB. Nothing to build, nothing per process but the search cache.
- ``memory`` (``posts.reads.engines.MemoryReads``): each workspace's query index
  (``posts.reads.index``) in a bounded cache (``posts.reads.cache``); a workspace not in the
  cache yet is read as the ``mongo`` engine reads it while its index is built in the background.

Search candidates live in the bounded cache in both modes (no vector index on MongoDB
without Atlas Search).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from bson import ObjectId

MEMORY, MONGO = "memory", "mongo"
ENGINES = (MEMORY, MONGO)


@dataclass(frozen=True)
class Filters:
    """Which posts a list shows: listed ones, or for a manager every post not merged
    (``moderation`` narrows it); on a board, in a status, with every one of ``words`` and
    ``facets``."""

    manager: bool = False
    board: str | None = None  # a board's id
    status: str | None = None
    moderation: str | None = None  # managers only
    words: tuple[str, ...] = field(default_factory=tuple)  # posts.text.word_terms
    facets: tuple[str, ...] = field(default_factory=tuple)  # every one of these (posts.triage: tags, owner, fields)
    only: frozenset[str] | None = None  # among these post ids only (the trending sort's posts with recent votes)


class Reads(Protocol):
    def page(self, slug: str, filters: Filters, sort: str, limit: int, offset: int) -> list[dict]:
        """The documents of one page of a list, in ``sort`` order (``posts.contract.SORTS``)."""

    def roadmap(self, slug: str, statuses: list[str], board: str | None, limit: int) -> dict[str, list[dict]]:
        """Each status's listed posts with the most votes (``_id``, ``title``, ``voteCount``, ``tags``, ``eta``)."""

    def search_candidates(self, slug: str, q: str, vector: np.ndarray | None, manager: bool, board: str | None,
                          lexical: int) -> list:
        """The posts similar to ``q`` (``posts.similarity.Match``), most similar first."""

    def build_now(self, slug: str) -> None:
        """Build the workspace's search candidates now if this process has none yet (a
        comparison that must see every post, not only those sharing a word: suggested
        duplicates); a request never waits for this."""

    def documents(self, oids: list[ObjectId]) -> list[dict]:
        """The documents of these posts, in this order (those that exist)."""

    def start(self) -> None:
        """Start what keeps the engine's caches warm (an API process, after fork)."""

    def ready(self) -> bool:
        """False while a new process warms up (it then reports not ready: ``/readyz``)."""


def open_reads(repo, config) -> Reads:
    from posts.reads.engines import MemoryReads, MongoReads

    budget = int(config.index_memory_mb * 2**20)
    if config.read_engine == MONGO:
        return MongoReads(repo, budget)
    return MemoryReads(repo, budget, warm_up_seconds=config.warm_up_seconds)
