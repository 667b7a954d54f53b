"""How ``GET /posts/search`` finds similar posts and scores them (docs/services/posts.md,
"Similar posts").

Two signals, fused:

- **lexical**: the posts sharing the rarest search terms with the query (the query index's
  ``candidates``), scored by :class:`posts.text.Scorer` (words, stems, trigrams: in [0, 1]);
- **semantic**: the posts whose title vector (posts.embeddings) is nearest the query's, by
  cosine; this finds wording with no word in common ("Night mode for the app" / "Please
  support a darker colour scheme").

Both sets are pooled and every pooled post gets both scores. Each score is calibrated on its
own, by a logistic fit on the tuning set of labeled duplicates (``bench/search_bench.py`` fits
and reports both), into an estimate of the probability that the post is a duplicate of the
query; ``similarity`` is the larger of the two. A post with no vector (the model is off, the
backfill has not reached it yet, or its title has no word the model knows) has the lexical one.

Why the larger, not a weighted sum: on the labeled sets every weighted sum with a lexical
weight above 0 ranks worse than the cosine alone (posts that share topic words without asking
for the same thing are exactly what the lexical score rewards), while the larger of the two
calibrated estimates ranks as well as the cosine there and keeps what only the lexical signal
finds: misspellings ("notifcations") and words the model does not know, where the cosine
is near 0. Figures: docs/benchmarks.md, "Similar posts".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from posts import text
from posts.reads.index import Entry, WorkspaceIndex

# logistic(a * score + b), fitted on the tuning set only (bench/data/duplicates.json at 10,000
# posts); the held-out check is in docs/benchmarks.md, "Similar posts".
SEMANTIC_CALIBRATION = (10.351, -7.131)  # of the cosine
LEXICAL_CALIBRATION = (4.228, -4.375)  # of posts.text.Scorer's score
# How many nearest titles join the lexical candidates: a similar-posts list shows a few.
SEMANTIC_CANDIDATES = 50


@dataclass(frozen=True)
class Match:
    entry: Entry
    similarity: float
    lexical: float
    cosine: float | None  # None: the post has no vector


def logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def fused(lexical: float, cosine: float | None) -> float:
    """The similarity of a post with lexical score ``lexical`` and cosine ``cosine`` (None: no vector)."""
    a, b = LEXICAL_CALIBRATION
    by_words = logistic(a * lexical + b) if lexical > 0 else 0.0  # nothing in common: no evidence
    if cosine is None:
        return by_words
    a, b = SEMANTIC_CALIBRATION
    return max(by_words, logistic(a * cosine + b))


def rank(
    index: WorkspaceIndex,
    q: str,
    query_vector: np.ndarray | None,
    *,
    manager: bool,
    board: str | None,
    lexical_candidates: int,
) -> list[Match]:
    """Every pooled post with its scores, most similar first (ties: older post first)."""
    terms = text.query_terms(q)
    pool = {e.oid: e for e in index.candidates(terms, manager, board, lexical_candidates)} if terms else {}
    if query_vector is not None:
        for _, entry in index.nearest(query_vector, manager, board, SEMANTIC_CANDIDATES):
            pool.setdefault(entry.oid, entry)
    entries = list(pool.values())
    if not entries:
        return []
    features = [{"terms": e.terms, "titleTerms": e.title_terms} for e in entries]
    scorer = text.Scorer(q, features)
    cosines = index.cosines(query_vector, entries) if query_vector is not None else [None] * len(entries)
    matches = []
    for entry, feature, cosine in zip(entries, features, cosines):
        lexical = scorer.score(feature)
        matches.append(Match(entry, fused(lexical, cosine), lexical, cosine))
    matches.sort(key=lambda m: (-m.similarity, m.entry.oid))
    return matches
