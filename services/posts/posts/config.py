"""The posts service's own settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from common.config import setting


@dataclass(frozen=True)
class PostsConfig:
    # Seconds between two polls of the read model by each API process (its in-memory mirror).
    read_model_poll: float = 0.1
    # At most one fallback call to the workspaces service per workspace and process this often.
    fallback_interval: float = 1.0
    # Most candidates a similarity search scores.
    search_candidates: int = 2000
    # Items below this similarity are not returned by /posts/search.
    min_similarity: float = 0.1


def load_config(environ: Mapping[str, str] | None = None) -> PostsConfig:
    env = os.environ if environ is None else environ
    return PostsConfig(
        read_model_poll=setting(env, "POSTS_READ_MODEL_POLL", PostsConfig.read_model_poll, float),
        fallback_interval=setting(env, "POSTS_FALLBACK_INTERVAL", PostsConfig.fallback_interval, float),
        search_candidates=setting(env, "POSTS_SEARCH_CANDIDATES", PostsConfig.search_candidates, int),
        min_similarity=setting(env, "POSTS_MIN_SIMILARITY", PostsConfig.min_similarity, float),
    )
