"""The posts API's bounded memory and cold start (docs/services/posts.md, "Reads").

    .venv/bin/python bench/reads_bench.py [--workspaces 2000] [--posts 200000] [--budget 256]
                                          [--reads 3000] [--rounds 2] [--start-size 50000] [--data DIR]

Starts its own platform on the default install with one posts API process (WEB_CONCURRENCY=1,
the memory engine), seeds ``--posts`` posts over ``--workspaces`` workspaces (written straight
to the database with the service's own document builder, title vectors included) and one
workspace of ``--start-size`` posts, then prints figures only:

- memory: ``--reads`` lists (sort=top, 20 a page) spread over the workspaces by a Zipf law
  (s = 1.1: a few hot workspaces, a long tail), one at a time, with POSTS_INDEX_MEMORY_MB =
  ``--budget``; then the same reads again with a budget nothing reaches (every workspace kept,
  as the process did before the cache was bounded); ``--rounds`` times, the order swapped each
  round (the stand-in settles after seeding: the first run must not pay for it alone). For each:
  the worker's RSS (the sentence model included) before any list and at its peak, the p50/p95
  of the lists of the hottest 10% of workspaces and their ratio, and the cache's hits, misses,
  builds and evictions (``/metrics``);
- start: lists of the ``--start-size`` workspace that no process has built yet (answered by
  the database while its index builds in the background; at most 20, or 240 s, until one is
  answered by the index), then the process restarted and the same lists as soon as it is ready
  (it builds the indexes recorded as slow to build first): p50/p95/max of each, how long until
  alive and ready, and until the index answers.

``--data DIR`` keeps the stand-in's data in DIR: a second run with the same arguments skips
the seeding (about 13 minutes on the machine of docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import NamedTuple

import urllib3
from prometheus_client.parser import text_string_to_metric_families

from harness import NO_RATE_LIMITS, api_caller, insert_posts, machine, process_tree, rss_mb, wait_ready, wait_up
from posts_bench import generated_post

START_LISTS, START_SECONDS = 20, 240.0  # the start phase's lists of the big workspace, at most


class ReadsRun(NamedTuple):
    """One run of the Zipf-spread lists: the worker's RSS (MB) and the hot lists' times (ms)."""

    rss_before: float  # before any list, the sentence model loaded
    rss_peak: float
    p50: float
    p95: float


def p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return 1000 * statistics.median(ordered), 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspaces", type=int, default=2000)
    parser.add_argument("--posts", type=int, default=200_000)
    parser.add_argument("--budget", type=float, default=256)
    parser.add_argument("--reads", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--start-size", type=int, default=50_000)
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args()

    from pymongo import MongoClient

    from devstack import LocalStack
    from posts import embeddings

    print(f"machine: {machine()}")
    env = {**NO_RATE_LIMITS, "WEB_CONCURRENCY": "1", "POSTS_READ_ENGINE": "memory", "POSTS_INDEX_MEMORY_MB": str(args.budget)}
    # The MongoDB stand-in keeps its data in a folder rather than in memory (250,000 posts and
    # their vectors). Seeding once stalled it at 1,000-1,800 workspaces: its retryable-write
    # registry, which the local stack's retryWrites=false avoids (docs/benchmarks.md).
    storage = args.data or Path(tempfile.mkdtemp(prefix="reads-bench-mongo-"))
    storage.mkdir(parents=True, exist_ok=True)
    seeded_file = storage / f"seeded-{args.workspaces}-{args.posts}-{args.start_size}.json"
    stack = LocalStack(log_dir=Path(tempfile.mkdtemp(prefix="reads-bench-")), extra_env=env, mongo_storage=str(storage / "mongo"))
    stack.start()
    http = urllib3.PoolManager(maxsize=4)
    embedder = embeddings.LazyEmbedder()
    db = MongoClient(stack.mongodb_uri)["feedback_posts"]
    vectors: dict[str, bytes] = {}
    try:

        call = api_caller(stack.url, http)

        def patiently(method: str, path: str, body: dict, done_already: str):
            """One seeding call by the operator, again after a gateway 5xx (the stand-in stalls
            now and then under four seeding threads: docs/benchmarks.md); a 409 after a retry is
            the first attempt's success, read back with GET ``done_already``."""
            for attempt in range(8):
                r = http.request(method, stack.url + "/v1" + path, body=json.dumps(body),
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {stack.admin_token}"}, timeout=120)
                if r.status < 300:
                    return json.loads(r.data)
                if r.status == 409 and attempt:
                    return call("GET", done_already, key=stack.admin_token)
                assert r.status >= 500, (path, r.status, r.data[:300])
                time.sleep(2 * (attempt + 1))
            raise RuntimeError(f"{path}: the platform kept failing")

        def seed(slug: str, size: int, rng: random.Random) -> None:
            patiently("POST", "/workspaces", {"slug": slug, "name": slug}, f"/workspaces/{slug}")
            board = patiently("POST", f"/workspaces/{slug}/boards", {"slug": "features", "name": "Features"}, f"/workspaces/{slug}/boards")
            board = board["items"][0] if "items" in board else board
            seeds = [generated_post(rng) for _ in range(size)]
            new = sorted({t for t, _ in seeds} - set(vectors))
            vectors.update(zip(new, (embeddings.to_stored(v) for v in embedder.titles(new))) if new else ())
            insert_posts(db, slug, [board["id"]], seeds, vectors, rng, batch_size=5000)

        rng = random.Random(20)
        if seeded_file.exists():
            run = json.loads(seeded_file.read_text())["run"]
            print(f"reusing the data seeded in {storage}", flush=True)
        else:
            run = uuid.uuid4().hex[:4]
        slugs = [f"z{run}-{i}" for i in range(args.workspaces)]
        big = f"start-{run}"
        per = args.posts // args.workspaces
        if not seeded_file.exists():
            started = time.perf_counter()
            # Seeded by four threads (each workspace's generated posts drawn from its own seed),
            # so the set is the same whatever the order the threads take.
            embedder.get()  # loaded once, before the threads share it
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda i: seed(slugs[i], per, random.Random(i)), range(len(slugs))))
            seed(big, args.start_size, rng)
            seeded_file.write_text(json.dumps({"run": run}))
            print(f"seeded {args.posts} posts over {args.workspaces} workspaces and {args.start_size} in one, "
                  f"in {time.perf_counter() - started:.0f} s", flush=True)

        weights = [1 / (rank + 1) ** 1.1 for rank in range(len(slugs))]
        hot = set(slugs[: max(1, len(slugs) // 10)])  # rank order: the hottest first
        order = rng.choices(slugs, weights=weights, k=args.reads)
        api = stack.processes["posts-api"]
        port = stack.service_ports["posts"]

        def worker_rss() -> float:
            workers = [p for p in process_tree(api.popen.pid) if p != api.popen.pid]
            return max(rss_mb(p) for p in workers or [api.popen.pid])

        def restart(budget: float) -> tuple[float, float]:
            """Restart the posts API; seconds until it is alive, and until it is ready (it first
            builds the indexes recorded as slow to build, posts.reads.cache)."""
            api.stop()
            api.env["POSTS_INDEX_MEMORY_MB"] = str(budget)
            t = time.perf_counter()
            api.start()
            deadline = time.perf_counter() + 180
            wait_up(f"http://127.0.0.1:{port}/healthz", timeout=180)
            alive = time.perf_counter() - t
            wait_ready(f"http://127.0.0.1:{port}/readyz", timeout=max(1.0, deadline - time.perf_counter()))
            return alive, time.perf_counter() - t

        def first_lists(slug: str, all_of_them: bool) -> tuple[list[float], float | None]:
            """START_LISTS lists one after the other (``all_of_them``), or until one is as fast
            as a hot list (its index answers), at most START_LISTS of them or for START_SECONDS
            (a cold read of a big workspace is a scan on the stand-in: twenty of them beside the
            index's build swamped it); then how long until the index answers."""
            up, times, indexed = time.perf_counter(), [], None
            while len(times) < START_LISTS and time.perf_counter() - up < START_SECONDS:
                t = time.perf_counter()  # a read past the gateway's timeout counts as its time to the 504
                http.request("GET", f"{stack.url}/v1/workspaces/{slug}/posts?limit=20&sort=top", timeout=120)
                times.append(time.perf_counter() - t)
                if times[-1] < 0.02 and indexed is None:
                    indexed = time.perf_counter() - up
                if indexed is not None and not all_of_them:
                    break
            if indexed is not None:
                return times, indexed
            deadline = time.perf_counter() + 120
            while time.perf_counter() < deadline:
                t = time.perf_counter()
                call("GET", f"/workspaces/{slug}/posts?limit=20&sort=top")
                if time.perf_counter() - t < 0.02:
                    return times, time.perf_counter() - up
                time.sleep(0.2)
            return times, None

        def cache_counts() -> dict[str, float]:
            """The worker's query-index counters (posts.reads.cache), from its /metrics."""
            r = http.request("GET", f"http://127.0.0.1:{port}/metrics", timeout=10)
            counts = {}
            for family in text_string_to_metric_families(r.data.decode()):
                for sample in family.samples:
                    if sample.name.startswith("feedback_posts_index_") and sample.name.endswith("_total"):
                        result = sample.labels.get("result")
                        counts[sample.name.removeprefix("feedback_posts_index_").removesuffix("_total")
                               + (f" {result}" if result else "")] = sample.value
            return counts

        def reads_run(label: str, budget: float) -> ReadsRun:
            restart(budget)
            call("GET", f"/workspaces/{slugs[0]}/posts/search?q=export")  # loads the sentence model
            rss_before = worker_rss()
            half = len(order) // 2  # measured in the second half: the cache has settled
            hot_times, rss_peak, counts_before = [], 0.0, {}
            for i, slug in enumerate(order):
                if i == half:
                    counts_before = cache_counts()
                t = time.perf_counter()
                call("GET", f"/workspaces/{slug}/posts?limit=20&sort=top")
                if slug in hot and i >= half:
                    hot_times.append(time.perf_counter() - t)
                if i % 200 == 0:
                    rss_peak = max(rss_peak, worker_rss())
            counts = {k: v - counts_before.get(k, 0) for k, v in cache_counts().items()}
            run = ReadsRun(rss_before, max(rss_peak, worker_rss()), *p50_p95(hot_times))
            # Printed as soon as measured: the start phase below can outlast a session on the stand-in.
            print(f"  {label:24} worker RSS (model included) {run.rss_before:4.0f} MB before any list, "
                  f"{run.rss_peak:4.0f} MB at peak; lists of the hottest 10%: p50 {run.p50:5.1f} ms, p95 {run.p95:5.1f} ms; "
                  f"second half: {', '.join(f'{k} {v:.0f}' for k, v in sorted(counts.items()))}", flush=True)
            return run

        # A reused data folder remembers the big workspace as built (post_warm_indexes): forgotten,
        # so that no process builds it before the start phase reads it cold.
        db.post_warm_indexes.delete_many({})
        runs = ((f"budget {args.budget:.0f} MB", args.budget), ("unbounded (as before)", 1_000_000))
        figures: dict[str, list[ReadsRun]] = {label: [] for label, _ in runs}
        for round_ in range(args.rounds):
            for label, budget in runs if round_ % 2 == 0 else runs[::-1]:
                figures[label].append(reads_run(label, budget))

        # Start: a workspace no process has built yet is read cold (by the database while its
        # index builds); a new process, having seen it built (and slow to build), warms it first.
        never_built = first_lists(big, all_of_them=False)
        alive, ready = restart(args.budget)
        after_restart = first_lists(big, all_of_them=True)

        print(f"\nmemory engine, one posts API process, {args.posts} posts over {args.workspaces} workspaces, "
              f"{args.reads} lists spread by a Zipf law (s=1.1), {args.rounds} rounds:")
        base = statistics.median(run.p95 for run in figures["unbounded (as before)"])
        for label, measured in figures.items():
            before, peak, p50, p95 = (statistics.median(column) for column in zip(*measured))
            print(f"  {label:24} worker RSS (model included) {before:4.0f} MB before any list, {peak:4.0f} MB at peak "
                  f"(+{peak - before:.0f} MB); lists of the hottest 10% (medians of the rounds): p50 {p50:5.1f} ms, "
                  f"p95 {p95:5.1f} ms ({p95 / base:4.2f}x the unbounded p95)")
        for label, (times, indexed) in (("never built by any process", never_built),
                                        (f"after a restart (alive {alive:.1f} s, ready {ready:.1f} s)", after_restart)):
            p50, p95 = p50_p95(times)
            print(f"start, the {args.start_size}-post workspace {label}: first {len(times)} lists p50 {p50:.0f} ms, "
                  f"p95 {p95:.0f} ms, max {1000 * max(times):.0f} ms; its index answered after "
                  + (f"{indexed:.1f} s" if indexed is not None else "more than 120 s"))
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
