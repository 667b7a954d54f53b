"""Text features for search's lexical signal: normalized words, a light stemmer, trigrams.

The local MongoDB-protocol server has no text index, so the service builds its own:
each post stores ``terms`` (indexed, multikey) and ``titleTerms``. Candidates are the
posts sharing a term with the query; :class:`Scorer` scores them by the cosine of
weighted feature vectors, so a score is always in [0, 1].

Features:
- ``w:<stem>``: a significant word, lower-cased, accents and stopwords removed, stemmed;
- ``p:<first 4 letters>``: a prefix of longer words, so typos past the 4th letter still
  find candidates (indexed, not scored);
- character trigrams of each stem (computed when scoring) for misspellings and variants.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from functools import lru_cache


STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been being below both but by can could
    did do does doing done down during each either else ever every few for from further get gets getting give
    had has have having he her here hers him his how i if in into is it its itself just let lets like ll
    me more most much must my need needs no nor not now of off on once only or other our ours out over own
    please pls plz really same she should so some such than thank thanks that the their theirs them then
    there these they this those through to too under until up us use used using very via want wants was way
    we were what when where which while who whom why will with would you your yours yet ve re s t d m
    add adding added able allow allows allowing option options feature features request requests support
    supported possible possibility would ability make makes making new hi hello great love nice idea ideas
    suggestion suggest missing currently thing things something someone everyone etc even maybe perhaps
    lot lots bit one two first""".split()
)
CONTENT_CHARS = 2000  # content beyond this does not add search terms
MAX_TERMS = 300

_TOKEN = re.compile(r"[a-z0-9]+")
_SUFFIXES = (
    ("ational", "ate"), ("ization", "ize"), ("isation", "ize"), ("ations", "ate"), ("ation", "ate"),
    ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("nesses", ""), ("ness", ""),
    ("ments", ""), ("ment", ""), ("ings", ""), ("ing", ""), ("ies", "y"), ("ied", "y"), ("edly", ""),
    ("ed", ""), ("ly", ""), ("sses", "ss"),
)


def tokens(text: str) -> list[str]:
    """Lower-case ASCII words; apostrophes vanish ("doesn't" -> "doesnt")."""
    text = unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()
    return _TOKEN.findall(text.replace("'", ""))


@lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    """A light suffix stripper: "exporting", "exports", "exported" -> "export"."""
    if len(word) <= 3 or word.isdigit():
        return word
    stemmed = word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stemmed = word[: -len(suffix)] + replacement
            break
    else:
        if word.endswith(("ches", "shes", "xes", "zes", "sses")):
            stemmed = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            stemmed = word[:-1]
    if stemmed != word and len(stemmed) > 3 and stemmed[-1] == stemmed[-2] and stemmed[-1] not in "lsz":
        stemmed = stemmed[:-1]  # "running" -> "runn" -> "run"
    if len(stemmed) > 3 and stemmed.endswith("e"):
        stemmed = stemmed[:-1]  # "share" and "sharing" meet at "shar"
    return stemmed


def features(text: str) -> set[str]:
    """The scored features of ``text``: its significant words' ``w:`` stems."""
    significant = {stem(t) for t in tokens(text) if t not in STOPWORDS}
    return {f"w:{s}" for s in significant if len(s) > 1}


def index_terms(title: str, content: str) -> tuple[list[str], list[str]]:
    """``(terms, titleTerms)`` to store with a post."""
    title_features = features(title)
    every = title_features | features(content[:CONTENT_CHARS])
    prefixes = {f"p:{f[2:6]}" for f in every if f.startswith("w:") and len(f) >= 7}
    terms = sorted(every | prefixes)
    return terms[:MAX_TERMS], sorted(title_features)


def query_terms(q: str) -> list[str]:
    """Index terms that find candidates for ``q`` (features plus prefixes)."""
    fs = features(q)
    return sorted(fs | {f"p:{f[2:6]}" for f in fs if f.startswith("w:") and len(f) >= 7})


def word_terms(q: str) -> list[str]:
    """The ``w:`` terms of ``q``: the listing's ``q`` filter requires all of them."""
    return sorted(f for f in features(q) if f.startswith("w:"))


def trigrams(fs) -> set[str]:
    grams: set[str] = set()
    for f in fs:
        if f.startswith("w:"):
            grams |= _word_trigrams(f)
    return grams


@lru_cache(maxsize=100_000)
def _word_trigrams(feature: str) -> frozenset[str]:
    word = f"#{feature[2:]}#"
    return frozenset(f"g:{word[i:i + 3]}" for i in range(len(word) - 2))


# Weights of trigrams against words, and of terms found only in a post's content.
GRAM, CONTENT_ONLY, DEFAULT_IDF, MAX_IDF = 0.15, 0.35, 2.0, 6.0


class Scorer:
    """Score candidates against one query; document frequencies come from the candidates
    themselves (every post sharing a query term is a candidate, so for query terms they
    are the workspace's own frequencies).

    A score is the cosine of two weighted feature vectors: the query's (its words
    weighted by idf, plus its trigrams) and the candidate's (its title's features the
    same way, words outside the query at ``DEFAULT_IDF``; query terms found only in its content
    at ``CONTENT_ONLY`` of their weight; its title's trigrams). The three parts share no
    feature, so dot product and norm are sums over sets, with no vector built per candidate
    (the same scores, in less than half the time: docs/benchmarks.md)."""

    def __init__(self, q: str, candidates: list[dict]):
        self.query = features(q)
        n = max(len(candidates), 1)
        df = Counter(f for c in candidates for f in set(c.get("terms", ())) & self.query)
        # Capped, so one rare word cannot drown every other shared word.
        self.idf = {f: min(MAX_IDF, 1.0 + math.log(1 + n / max(df[f], 1))) for f in self.query}
        self.q_sq = {f: self.idf[f] ** 2 for f in self.query}  # squared weights
        self.q_grams = trigrams(self.query)
        self.q_norm = math.sqrt(sum(self.q_sq.values()) + GRAM**2 * len(self.q_grams)) or 1.0

    def score(self, candidate: dict) -> float:
        # Only words: posts stored before the synonym table went (docs/benchmarks.md) still
        # carry its "c:" concepts, which no query has any more.
        title = {f for f in candidate.get("titleTerms", ()) if f.startswith("w:")}
        shared = title & self.query
        content_hits = self.query.intersection(candidate.get("terms", ())) - title
        grams = trigrams(title)
        shared_sq = sum(self.q_sq[f] for f in shared)
        content_sq = sum(self.q_sq[f] for f in content_hits)
        others_sq = len(title - shared) * DEFAULT_IDF**2
        d_norm = math.sqrt(shared_sq + content_sq * CONTENT_ONLY**2 + others_sq + GRAM**2 * len(grams)) or 1.0
        dot = shared_sq + content_sq * CONTENT_ONLY + GRAM**2 * len(grams & self.q_grams)
        return max(0.0, min(1.0, dot / (self.q_norm * d_norm)))

