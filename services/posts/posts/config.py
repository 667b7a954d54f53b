"""The posts service's own settings, read once from the environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import as_bool, from_env, load, positive


def _engine(value: str) -> str:
    from posts.reads import ENGINES  # only when the variable is set: the module loads numpy

    if value.strip().lower() not in ENGINES:
        raise ValueError(f"one of {', '.join(ENGINES)}")
    return value.strip().lower()


@dataclass(frozen=True)
class PostsConfig:
    # The longest each API process's mirror of the read model waits between two looks (a change
    # wakes it at once through a change stream; without change streams, it looks this often).
    read_model_poll: float = from_env("POSTS_READ_MODEL_POLL", 1.0, float)
    # An anonymous write is checked against what the workspaces service said at most this many
    # seconds ago (a revoked anonSubmit/anonVote/anonComment holds within this bound).
    permission_max_age: float = from_env("POSTS_PERMISSION_MAX_AGE", 5.0, float)
    # Most lexical candidates a similarity search scores (the nearest titles join them); 0: the
    # default of the mode, see lexical_candidates.
    search_candidates: int = from_env("POSTS_SEARCH_CANDIDATES", 0, int)
    # Items below this similarity are not returned by /posts/search (0.01: any post sharing a
    # search term, or with a title cosine of at least 0.24; docs/services/posts.md).
    min_similarity: float = from_env("POSTS_MIN_SIMILARITY", 0.01, float)
    # A new post's most similar listed posts at or above this similarity (the estimated
    # probability of a duplicate) are queued for the team as suggested duplicates.
    suggest_similarity: float = from_env("POSTS_SUGGEST_SIMILARITY", 0.5, float)
    # Semantic similarity (a sentence model on the CPU, about 170 MiB per process that loads
    # it); off: lexical only, and no process loads the model.
    semantic_search: bool = from_env("POSTS_SEMANTIC_SEARCH", True, as_bool)
    # Posts the backfill embeds per batch, and its pause when it has nothing left to embed.
    backfill_batch: int = from_env("POSTS_BACKFILL_BATCH", 64, int)
    backfill_idle: float = from_env("POSTS_BACKFILL_IDLE", 10.0, float)
    # How lists and the roadmap are read (posts.reads): "memory", each workspace's query index in
    # a bounded cache per process (the default install: the local database sorts in Python), or
    # "mongo", plain queries on the compound indexes (real MongoDB: the chart's default).
    read_engine: str = from_env("POSTS_READ_ENGINE", "memory", _engine)
    # The bytes of query indexes one process keeps (MiB), as measured by walking them; least
    # recently used workspaces are evicted past it. Search candidates count in both engines.
    index_memory_mb: float = from_env("POSTS_INDEX_MEMORY_MB", 256.0, positive(float))
    # A new API process reports ready once it has built the indexes of the workspaces too slow
    # to read cold (posts.reads.cache, "Warm before ready"), or after this many seconds.
    warm_up_seconds: float = from_env("POSTS_WARM_UP_SECONDS", 120.0, positive(float))
    # How long after writing it an author may edit or delete their post or comment (seconds;
    # posts.contract.AUTHOR_WINDOW_SECONDS, Canny-like 15 minutes); the team deletes any time.
    author_window: float = from_env("POSTS_AUTHOR_WINDOW_SECONDS", 900.0, float)

    @property
    def lexical_candidates(self) -> int:
        """400 when lexical search is all there is; 200 with the sentence model, where the
        nearest titles carry the ranking: as good as 400 on the labeled sets, in half the time
        (docs/benchmarks.md, "Similar posts")."""
        return self.search_candidates or (200 if self.semantic_search else 400)


def load_config(environ: Mapping[str, str] | None = None) -> PostsConfig:
    return load(PostsConfig, environ)
