"""Similar-post search quality (endpoint 3): lexical, semantic and hybrid, on a tuning set and a
held-out set of labeled duplicates, each in a board of 10,000 posts with topic-sharing
distractors. Prints figures only.

    .venv/bin/python bench/search_bench.py        # part of `make bench`; about 3 minutes

What it runs is the service's own ranking (``posts.similarity.rank`` on a
``posts.reads.index.WorkspaceIndex``, vectors from ``posts.embeddings``), in this process: the
latency through the gateway is ``bench/scale_bench.py``'s.

- Sets: TUNING = bench/data/duplicates.json (a synonym table, since removed, was written with it in view),
  HELD-OUT = bench/data/duplicates_heldout.json (written separately, never tuned on: groups of
  duplicates plus hard negatives that share topic words with a group).
- Each set gets its own board of 10,000 posts: its groups' posts, its hard negatives, the
  distractors of bench/data/distractors.json, and filler made from distractors with a prefix
  and/or a suffix (fixed seed).
- A query is one post of a group, as a new post's title; its mates are the other posts of its
  group. recall@5 = |top 5 ∩ mates| / min(5, |mates|), MRR = mean 1 / rank of the first mate,
  P@1 = share of queries whose first result is a mate. The query post itself is left out of
  its own results; results below ``min_similarity`` are dropped, as the API drops them.
- Both calibrations of ``posts.similarity`` are fitted on the tuning set only; this prints what
  the fit finds beside what ships, and the weighted sums that fusion by the larger of the two
  calibrated estimates was chosen over.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, as in a service process

import hashlib
import json
import random
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from bson import ObjectId

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
CACHE = HERE.parent / ".cache" / "search-bench"

from posts import embeddings, similarity, text  # noqa: E402
from posts.config import PostsConfig  # noqa: E402
from posts.reads.index import WorkspaceIndex  # noqa: E402

N_POSTS = 10_000
SEED = 7
TOP = 10  # the pairs each query contributes to a calibration fit
WEIGHTS = [round(0.1 * i, 1) for i in range(6)]  # lexical weights of a weighted sum, tried on the tuning set
CONFIG = PostsConfig()
PREFIXES = ["Bug: ", "Request: ", "Idea: ", "Please: ", "[Mobile] ", "[Admin] ", "Feature: ", "Question: ",
            "Minor: ", "Urgent: ", "Still open: ", "Customer ask: ", "Follow-up: ", "Enterprise: "]
SUFFIXES = [" on Android", " on iOS", " in Safari", " in Firefox", " for admins", " for guests",
            " since the last update", " on the public portal", " for enterprise plans", " on small screens",
            " in the mobile app", " (again)", " please", " for our team", " with many posts", " when offline",
            " in the widget", " for the API", " in dark mode", " via email"]


# -- the boards ----------------------------------------------------------------------------------


def filler(distractors: list[str], n: int, taken: set[str]) -> list[str]:
    """``n`` titles: a distractor with a prefix, a suffix or both, none equal to one in ``taken``."""
    combos = [(d, p, s) for d in distractors for p in [""] + PREFIXES for s in [""] + SUFFIXES if p or s]
    random.Random(SEED).shuffle(combos)
    out, seen = [], set(taken)
    for base, p, s in combos:
        title = f"{p}{base[0].lower() + base[1:] if p and not p.startswith('[') else base}{s}"
        if title not in seen:
            seen.add(title)
            out.append(title)
            if len(out) == n:
                return out
    raise ValueError("not enough filler combinations")


def board(groups: list[dict], distractors: list[str]) -> list[dict]:
    """10,000 posts: ``{"title", "group"}`` (group None: not anyone's duplicate)."""
    posts = [{"title": t, "group": g["id"]} for g in groups for t in g["posts"]]
    posts += [{"title": t, "group": None} for g in groups for t in g.get("hardNegatives", [])]
    posts += [{"title": t, "group": None} for t in distractors]
    posts += [{"title": t, "group": None} for t in filler(distractors, N_POSTS - len(posts), {p["title"] for p in posts})]
    random.Random(SEED).shuffle(posts)
    return posts


def vectors(titles: list[str]) -> list[np.ndarray | None]:
    """Title vectors, cached under .cache/ by titles and model (embedding 20,000 titles takes a minute)."""
    key = hashlib.sha256("\n".join([embeddings.MODEL, *titles]).encode()).hexdigest()[:16]
    path = CACHE / f"{key}.npz"
    if path.exists():
        saved = np.load(path)
        return [v if ok else None for v, ok in zip(saved["vectors"], saved["known"])]
    found = embeddings.LazyEmbedder().titles(titles)
    CACHE.mkdir(parents=True, exist_ok=True)
    known = np.array([v is not None for v in found])
    np.savez(path, vectors=np.stack([v if v is not None else np.zeros(embeddings.DIMENSION, np.float32) for v in found]), known=known)
    return found


def build_index(posts: list[dict], vecs: list[np.ndarray | None]) -> WorkspaceIndex:
    created = datetime(2026, 1, 1, tzinfo=timezone.utc)
    docs = []
    for i, (post, vector) in enumerate(zip(posts, vecs)):
        post["oid"] = ObjectId(f"{i + 1:024x}")
        terms, title_terms = text.index_terms(post["title"], "")
        docs.append({"_id": post["oid"], "boardId": "b", "statusSlug": "open", "moderationState": "approved",
                     "listed": True, "mergedInto": None, "createdAt": created, "title": post["title"],
                     "terms": terms, "titleTerms": title_terms, "embedding": embeddings.to_stored(vector), "changedAt": i})
    return WorkspaceIndex(docs, {})


# -- queries -------------------------------------------------------------------------------------


class Run:
    """Every query of one set on one board: its pooled matches (lexical score and cosine of
    each), so any lexical weight is evaluated by fusing again, without ranking again."""

    def __init__(self, posts: list[dict], index: WorkspaceIndex, vecs, semantic: bool):
        self.queries, self.timings = [], []
        groups: dict[str, set[int]] = {}
        for post in posts:
            if post["group"]:
                groups.setdefault(post["group"], set()).add(int(str(post["oid"]), 16))
        for post, vector in zip(posts, vecs):
            if not post["group"]:
                continue
            started = time.perf_counter()
            matches = similarity.rank(index, post["title"], vector if semantic else None, manager=False, board=None,
                                      lexical_candidates=PostsConfig(semantic_search=semantic).lexical_candidates)
            self.timings.append(time.perf_counter() - started)
            me = int(str(post["oid"]), 16)
            pooled = [(m.entry.oid, m.lexical, m.cosine) for m in matches if m.entry.oid != me]
            self.queries.append((pooled, groups[post["group"]] - {me}))

    def ranked(self, fuse) -> list[tuple[list[tuple[int, float]], set[int]]]:
        """Each query's results (post, similarity), best first and above min_similarity, and its mates."""
        out = []
        for pooled, mates in self.queries:
            scored = sorted(((fuse(lex, cos), oid) for oid, lex, cos in pooled), key=lambda x: (-x[0], x[1]))
            out.append(([(oid, s) for s, oid in scored if s >= CONFIG.min_similarity], mates))
        return out

    def metrics(self, fuse=similarity.fused) -> dict[str, float]:
        recall, rr, p1 = [], [], []
        for results, mates in self.ranked(fuse):
            ids = [oid for oid, _ in results]
            recall.append(len(set(ids[:5]) & mates) / min(5, len(mates)))
            first = next((i for i, oid in enumerate(ids) if oid in mates), None)
            rr.append(0.0 if first is None else 1.0 / (first + 1))
            p1.append(float(bool(ids) and ids[0] in mates))
        return {"R@5": statistics.mean(recall), "MRR": statistics.mean(rr), "P@1": statistics.mean(p1)}

    def pairs(self, cosine: bool) -> tuple[np.ndarray, np.ndarray]:
        """The cosine (or the lexical score) and the label of each query's top pairs by it."""
        xs, ys = [], []
        for pooled, mates in self.queries:
            scored = [(cos if cosine else lex, oid) for oid, lex, cos in pooled if (cos is not None) == cosine]
            for s, oid in sorted(scored, key=lambda x: (-x[0], x[1]))[:TOP]:
                xs.append(s)
                ys.append(float(oid in mates))
        return np.array(xs), np.array(ys)


def fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``p = 1 / (1 + exp(-(a x + b)))`` by maximum likelihood (Newton's method)."""
    X = np.stack([x, np.ones_like(x)], axis=1)
    beta = np.zeros(2)
    for _ in range(100):
        p = 1 / (1 + np.exp(-X @ beta))
        step = np.linalg.solve(X.T @ (X * (p * (1 - p))[:, None]) + 1e-9 * np.eye(2), X.T @ (y - p))
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return round(float(beta[0]), 3), round(float(beta[1]), 3)


def semantic_only(lexical: float, cosine: float | None) -> float:
    a, b = similarity.SEMANTIC_CALIBRATION
    return similarity.logistic(a * cosine + b)


def weighted_sum(weight: float):
    """The fusion not chosen: a calibrated weighted sum (calibration refitted per weight would
    not change the order, and the order is what the metrics measure)."""
    def fuse(lexical: float, cosine: float | None) -> float:
        a, b = similarity.SEMANTIC_CALIBRATION
        return similarity.logistic(a * (weight * lexical + (1 - weight) * cosine) + b)
    return fuse


def reliability(run: Run) -> list[tuple[str, float, float, int]]:
    """Predicted similarity against the observed duplicate rate, over each query's top results."""
    bands = [(0.0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 1.01)]
    rows = []
    for low, high in bands:
        predicted, observed = [], []
        for results, mates in run.ranked(similarity.fused):
            for oid, s in results[:TOP]:
                if low <= s < high:
                    predicted.append(s)
                    observed.append(float(oid in mates))
        if predicted:
            rows.append((f"[{low:.1f}, {min(high, 1.0):.1f})", statistics.mean(predicted), statistics.mean(observed), len(predicted)))
    return rows


def main() -> None:
    sets = {name: json.loads((DATA / f).read_text())["groups"] for name, f in (("tuning", "duplicates.json"), ("held-out", "duplicates_heldout.json"))}
    distractors = json.loads((DATA / "distractors.json").read_text())["posts"]
    runs: dict[tuple[str, bool], Run] = {}  # (set, semantic) -> Run
    for name, groups in sets.items():
        posts = board(groups, distractors)
        started = time.perf_counter()
        vecs = vectors([p["title"] for p in posts])
        print(f"{name}: {len(posts)} posts, {sum(len(g['posts']) for g in groups)} in {len(groups)} groups, "
              f"{sum(len(g.get('hardNegatives', ())) for g in groups)} hard negatives; vectors in {time.perf_counter() - started:.1f} s", flush=True)
        index = build_index(posts, vecs)
        runs[(name, True)] = Run(posts, index, vecs, semantic=True)
        runs[(name, False)] = Run(posts, index, vecs, semantic=False)

    print("\nFit on the tuning set only (what ships: posts/similarity.py):")
    print(f"  semantic calibration a, b: {fit_logistic(*runs[('tuning', True)].pairs(cosine=True))}  (ships {similarity.SEMANTIC_CALIBRATION})")
    print(f"  lexical calibration a, b:  {fit_logistic(*runs[('tuning', False)].pairs(cosine=False))}  (ships {similarity.LEXICAL_CALIBRATION})")
    print("  weighted sums w * lexical + (1 - w) * cosine, tuning set:")
    for w in WEIGHTS:
        m = runs[("tuning", True)].metrics(weighted_sum(w))
        print(f"    w = {w:.1f}: R@5 {m['R@5']:.3f}  MRR {m['MRR']:.3f}  P@1 {m['P@1']:.3f}")

    modes = [("lexical", False, similarity.fused), ("semantic", True, semantic_only),
             ("hybrid: weighted sum, w = 0.3", True, weighted_sum(0.3)), ("hybrid: larger calibrated estimate (ships)", True, similarity.fused)]
    print(f"\nSimilar posts at {N_POSTS:,} posts, min_similarity {CONFIG.min_similarity}:")
    print("| mode | tuning R@5 | MRR | P@1 | held-out R@5 | MRR | P@1 |")
    print("|---|---|---|---|---|---|---|")
    for label, semantic, fuse in modes:
        cells = []
        for name in sets:
            m = runs[(name, semantic)].metrics(fuse)
            cells += [f"{m['R@5']:.3f}", f"{m['MRR']:.3f}", f"{m['P@1']:.3f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")

    print("\nCalibration on held-out (what ships): predicted similarity | mean | observed duplicate rate | results")
    for band, predicted, observed, n in reliability(runs[("held-out", True)]):
        print(f"  {band}  {predicted:.2f}  {observed:.2f}  {n}")

    timings = [t * 1000 for (_, semantic), r in runs.items() if semantic for t in r.timings]
    timings.sort()
    print(f"\nrank() in process, hybrid, {len(timings)} queries at {N_POSTS:,} posts: "
          f"p50 {timings[len(timings) // 2]:.1f} ms, p95 {timings[int(len(timings) * 0.95)]:.1f} ms (plus embedding the query)")
    embedder = embeddings.LazyEmbedder()
    embedder.get()
    titles = [p for g in sets["held-out"] for p in g["posts"]][:200]
    took = []
    for title in titles:
        started = time.perf_counter()
        embedder.titles([title])
        took.append((time.perf_counter() - started) * 1000)
    took.sort()
    print(f"embedding one query title: p50 {took[len(took) // 2]:.1f} ms, p95 {took[int(len(took) * 0.95)]:.1f} ms")


if __name__ == "__main__":
    main()
