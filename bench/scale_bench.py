"""Board-scale reads: every read a board page uses, at 1,000, 10,000 and 50,000 posts.

    .venv/bin/python bench/scale_bench.py [--sizes 1000,10000,50000] [--requests 60] [--layout single]

Starts its own platform on the default install (``make run``'s layout unless ``--layout
processes``, local stand-ins, rate limits off: this measures reads, not limits), seeds one workspace per size (a few hundred posts through the API, the rest
written straight to the database with the service's own document builder, with comments on one
post), then prints figures only:

- p50/p95 through the gateway, one request at a time, of each read a board page uses, at each
  size, and the ratio of each to its figure at the smallest size; and of the web site's board
  page itself (services/web: its server time, its API calls included);
- list throughput under 16 connections (wrk) at each size, beside the trivial-Falcon ceiling;
- the resident memory of the process(es) serving the posts API (in make run's layout, the one
  process of the gateway and every WSGI service) after each size is loaded, per 10,000 posts;
- the first request of each workspace, and the start-up of a new posts API process: how long
  until alive (``/healthz``) and ready (``/readyz``: it builds first the indexes recorded as
  slow to build, posts.reads.cache), and the p50/p95 of its first 20 lists of the largest
  workspace once ready.

The read engine is the process's (POSTS_READ_ENGINE: ``memory`` unless set; ``mongo`` measures
the other engine on the same local server). Bounded memory over many workspaces: reads_bench.py.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import urllib3

from harness import (NO_RATE_LIMITS, api_caller, ensure_wrk, insert_posts, machine, process_tree, rss_mb, start_ceiling,
                     wait_ready, wait_up, wrk)
from posts_bench import generated_post

READS = {
    "list newest": "/posts?limit=20",
    "list top": "/posts?limit=20&sort=top",
    "list board+status": "/posts?limit=20&board=features&status=planned",
    "list page 26": "/posts?limit=20&offset=500&sort=discussed",
    "list revenue (team)": "/posts?limit=20&sort=revenue",
    "list score (team)": "/posts?limit=20&sort=score",
    "list tag": "/posts?limit=20&tag=bug",
    "list q": "/posts?limit=20&q=export",
    "roadmap": "/roadmap",
    "search": "/posts/search?q=export%20my%20reports%20to%20a%20spreadsheet",
    "comments": "/posts/{hot}/comments?limit=100",
    "agent-context": "/agent-context",
    "board page (HTML)": "/b/{slug}",  # the web site's board: its own API calls through the gateway
}


TRIAGE = {"tags": [{"slug": "bug", "name": "Bug", "color": "#dc2626"}],
          "fields": [{"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3}],
          "scoreFormula": "(votes + revenue / 1000) * impact"}


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return 1000 * statistics.median(ordered), 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def title_vectors(embedder, titles: list[str]) -> dict:
    """Each distinct title's vector (generated titles repeat: each is embedded once)."""
    distinct = sorted(set(titles))
    return dict(zip(distinct, embedder.titles(distinct)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--layout", default="single", choices=("single", "processes"),
                        help="make run's (the default) or the chart's, two workers per API (docs/architecture.md)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    from bson import ObjectId
    from pymongo import MongoClient

    from devstack import LocalStack, free_port
    from common.ids import now
    from posts import embeddings
    from posts.triage import Settings

    print(f"machine: {machine()}")
    ensure_wrk()
    stack = LocalStack(log_dir=Path(tempfile.mkdtemp(prefix="scale-bench-")), extra_env=NO_RATE_LIMITS, layout=args.layout)
    posts_process = "platform" if args.layout == "single" else "posts-api"  # the process that serves the posts API
    stack.start()
    ceiling_port = free_port()
    start_ceiling(ceiling_port)
    wait_up(f"http://127.0.0.1:{ceiling_port}/hello", timeout=30)
    http = urllib3.PoolManager(maxsize=4)
    embedder = embeddings.LazyEmbedder()
    db = MongoClient(stack.mongodb_uri)["feedback_posts"]
    try:

        call = api_caller(stack.url, http)

        results: dict[int, dict[str, tuple[float, float]]] = {}
        throughput, memory, first = {}, {}, {}
        for size in sizes:
            slug = f"scale-{size}-{uuid.uuid4().hex[:4]}"
            created = call("POST", "/workspaces", {"slug": slug, "name": f"Scale {size}"}, stack.admin_token)
            key = created["apiKey"]
            board = call("POST", f"/workspaces/{slug}/boards", {"slug": "features", "name": "Features"}, key)
            other = call("POST", f"/workspaces/{slug}/boards", {"slug": "bugs", "name": "Bugs"}, key)
            hot = call("POST", f"/workspaces/{slug}/posts", {"boardSlug": "features", "title": "Export my reports", "content": "x"}, key)["id"]
            rng = random.Random(size)
            seeds = [generated_post(rng) for _ in range(size - 1)]
            vectors = title_vectors(embedder, [title for title, _ in seeds])
            stored = {title: embeddings.to_stored(vector) for title, vector in vectors.items()}
            # A RICE-like score over votes, revenue and a number field, and a tag (docs/services/posts.md).
            saved = call("PUT", f"/workspaces/{slug}/triage", TRIAGE, key)
            triage = Settings(version=saved["version"], tags=tuple(saved["tags"]), fields=tuple(saved["fields"]),
                              formula_text=saved["scoreFormula"])
            insert_posts(db, slug, [board["id"], other["id"]], seeds, stored, rng, triage=triage)
            t0 = now()
            comments = [
                {"workspace": slug, "postId": ObjectId(hot), "parentId": None, "path": f"{i:06d}",
                 "depth": 0, "content": f"Me too {i}", "authorId": f"u{i}", "isTeamMember": False, "isPrivate": False,
                 "createdAt": t0}
                for i in range(2000)
            ]
            db.comments.insert_many(comments)

            started = time.perf_counter()
            call("GET", f"/workspaces/{slug}/posts?limit=20", key=key)  # queues this workspace's index build (one process)
            first[size] = 1000 * (time.perf_counter() - started)
            # Every gunicorn worker builds its own index on its first request for the workspace
            # (in the background, answering from the database meanwhile): lists until twenty in a
            # row are fast, so both workers hold the index before anything is measured.
            fast, deadline = 0, time.perf_counter() + 600
            while fast < 20 and time.perf_counter() < deadline:
                t = time.perf_counter()
                r = http.request("GET", f"{stack.url}/v1/workspaces/{slug}/posts?limit=20&sort=top", timeout=120)
                fast = fast + 1 if r.status == 200 and time.perf_counter() - t < 0.1 else 0
                time.sleep(0 if fast else 0.5)

            results[size] = {}
            for name, suffix in READS.items():
                if suffix.startswith("/b/"):
                    url = stack.url + suffix.format(slug=slug)

                    def get(url=url):
                        r = http.request("GET", url, timeout=120)
                        assert r.status == 200, (url, r.status)
                else:
                    path = f"/workspaces/{slug}" + suffix.format(hot=hot)
                    key_for = key if name == "agent-context" or "(team)" in name else None

                    def get(path=path, key_for=key_for):
                        call("GET", path, key=key_for)
                get()
                samples = []
                for _ in range(args.requests):
                    t = time.perf_counter()
                    get()
                    samples.append(time.perf_counter() - t)
                results[size][name] = percentiles(samples)
            load = wrk(f"{stack.url}/v1/workspaces/{slug}/posts?limit=20&sort=top", seconds=6, connections=16)
            throughput[size] = load.rps
            api = stack.processes[posts_process].popen.pid
            memory[size] = sum(rss_mb(p) for p in process_tree(api))
            print(f"seeded and measured {size} posts", flush=True)

        ceiling = wrk(f"http://127.0.0.1:{ceiling_port}/hello", seconds=6, connections=16)
        # A new posts API process: how long until it answers a list of the largest workspace.
        stack.processes[posts_process].stop()
        started = time.perf_counter()
        stack.processes[posts_process].start()
        port = stack.service_ports["posts"]
        wait_up(f"http://127.0.0.1:{port}/healthz", timeout=60)
        healthy = time.perf_counter() - started
        # Ready (in rotation): its workers built the indexes recorded as slow to build.
        wait_ready(f"http://127.0.0.1:{port}/readyz", in_a_row=10)
        up = time.perf_counter() - started
        first_reads = []
        for _ in range(20):
            t = time.perf_counter()
            call("GET", f"/workspaces/{slug}/posts?limit=20")
            first_reads.append(time.perf_counter() - t)
        answered = time.perf_counter() - started

        smallest = sizes[0]
        print("\np50 / p95 ms through the gateway, one request at a time (ratio of p50 to the smallest size):")
        print(f"{'read':20}" + "".join(f"{size:>26}" for size in sizes))
        for name in READS:
            row = f"{name[:20]:20}"
            for size in sizes:
                p50, p95 = results[size][name]
                ratio = p50 / results[smallest][name][0]
                row += f"{p50:9.1f} / {p95:6.1f} ({ratio:4.2f}x)"
            print(row)
        print("\nlist (sort=top) throughput, 16 connections: " + ", ".join(f"{size}: {throughput[size]:.0f} req/s" for size in sizes)
              + f"; trivial Falcon ceiling {ceiling.rps:.0f} req/s")
        print(f"RSS of the '{posts_process}' process tree after each size: " + ", ".join(f"{size}: {memory[size]:.0f} MB" for size in sizes))
        total = sum(sizes)
        print(f"  about {(memory[sizes[-1]] - memory[sizes[0]]) / (total - sizes[0]) * 10_000:.0f} MB per 10,000 posts held (all processes)")
        print("first request of each workspace (index built): " + ", ".join(f"{size}: {first[size]:.0f} ms" for size in sizes))
        p50, p95 = percentiles(first_reads)
        print(f"a new posts API process: healthy (alive) after {healthy:.1f} s, ready after {up:.1f} s; its first 20 lists "
              f"of the {sizes[-1]}-post workspace once ready: p50 {p50:.0f} ms, p95 {p95:.0f} ms, all answered "
              f"{answered - up:.2f} s after ready")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
