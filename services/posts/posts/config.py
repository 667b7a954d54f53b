"""The posts service's own settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from common.config import as_bool, setting


@dataclass(frozen=True)
class PostsConfig:
    # Seconds between two polls of the read model by each API process (its in-memory mirror).
    read_model_poll: float = 0.1
    # An anonymous write is checked against what the workspaces service said at most this many
    # seconds ago (a revoked anonSubmit/anonVote/anonComment holds within this bound).
    permission_max_age: float = 5.0
    # Most lexical candidates a similarity search scores (the nearest titles join them); 0: the
    # default of the mode, see lexical_candidates.
    search_candidates: int = 0
    # Items below this similarity are not returned by /posts/search (0.01: any post sharing a
    # search term, or with a title cosine of at least 0.24; docs/services/posts.md).
    min_similarity: float = 0.01
    # Semantic similarity (a sentence model on the CPU, about 170 MiB per process that loads
    # it); off: lexical only, and no process loads the model.
    semantic_search: bool = True
    # Posts the backfill embeds per batch, and its pause when it has nothing left to embed.
    backfill_batch: int = 64
    backfill_idle: float = 10.0
    # How lists and the roadmap are read (posts.reads): "memory", each workspace's query index in
    # a bounded cache per process (the default install: the local database sorts in Python), or
    # "mongo", plain queries on the compound indexes (real MongoDB: the chart's default).
    read_engine: str = "memory"
    # The bytes of query indexes one process keeps (MiB), as measured by walking them; least
    # recently used workspaces are evicted past it. Search candidates count in both engines.
    index_memory_mb: float = 256.0
    # A new API process reports ready once it has built the indexes of the workspaces too slow
    # to read cold (posts.reads.cache, "Warm before ready"), or after this many seconds.
    warm_up_seconds: float = 120.0

    @property
    def lexical_candidates(self) -> int:
        """400 when lexical search is all there is; 200 with the sentence model, where the
        nearest titles carry the ranking: as good as 400 on the labeled sets, in half the time
        (docs/benchmarks.md, "Similar posts")."""
        return self.search_candidates or (200 if self.semantic_search else 400)


def load_config(environ: Mapping[str, str] | None = None) -> PostsConfig:
    env = os.environ if environ is None else environ
    return PostsConfig(
        read_model_poll=setting(env, "POSTS_READ_MODEL_POLL", PostsConfig.read_model_poll, float),
        permission_max_age=setting(env, "POSTS_PERMISSION_MAX_AGE", PostsConfig.permission_max_age, float),
        search_candidates=setting(env, "POSTS_SEARCH_CANDIDATES", PostsConfig.search_candidates, int),
        min_similarity=setting(env, "POSTS_MIN_SIMILARITY", PostsConfig.min_similarity, float),
        semantic_search=setting(env, "POSTS_SEMANTIC_SEARCH", PostsConfig.semantic_search, as_bool),
        backfill_batch=setting(env, "POSTS_BACKFILL_BATCH", PostsConfig.backfill_batch, int),
        backfill_idle=setting(env, "POSTS_BACKFILL_IDLE", PostsConfig.backfill_idle, float),
        read_engine=setting(env, "POSTS_READ_ENGINE", PostsConfig.read_engine, _engine),
        index_memory_mb=setting(env, "POSTS_INDEX_MEMORY_MB", PostsConfig.index_memory_mb, _positive),
        warm_up_seconds=setting(env, "POSTS_WARM_UP_SECONDS", PostsConfig.warm_up_seconds, _positive),
    )


def _engine(value: str) -> str:
    from posts.reads import ENGINES

    if value.strip().lower() not in ENGINES:
        raise ValueError(f"one of {', '.join(ENGINES)}")
    return value.strip().lower()


def _positive(value: str) -> float:
    if float(value) <= 0:
        raise ValueError("a number of MiB above 0")
    return float(value)
