"""An import's speed and memory, and the board's reads afterwards (docs/benchmarks.md, "Import").

    .venv/bin/python bench/import_bench.py [--posts 100000] [--sizes 10000,100000] [--api-posts 2000]
                                           [--reads 200] [--data DIR]

Starts its own platform (local stand-ins, each service in its processes as the chart deploys
them), then for each size N of ``--sizes`` (default: a tenth of ``--posts``, and ``--posts``):

- writes a Canny-shaped export to disk, streamed (a zip of Canny's JSON lists, one member each,
  written item by item: the generator never holds the file): 2 boards, N/10 users with an
  address (at least 100), N posts, 5N votes (five voters a post), N/2 comments (every tenth an
  internal note, every fourth a reply to the one before it);
- restarts the portability worker (its peak RSS, VmHWM, is then this import's alone), sends the
  file to ``POST /v1/workspaces/{slug}/imports?source=canny`` in a new workspace, and waits for
  the job: seconds, items a second (the job's progress total: every post, vote, comment, user,
  board, status and merge), and VmHWM of the worker process that ran the import, read from
  /proc when it ends (and the posts API's RSS, sampled every second, which writes what it
  brings);
- then ``--reads`` lists (top and newest, 20 a page) and searches on the imported workspace,
  and the same on a workspace of ``--api-posts`` posts created through the API: p50 and p95.

Figures are printed as they are measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import urllib3

from harness import NO_RATE_LIMITS, api_caller, cpu_seconds, machine, process_tree, rss_mb
from posts_bench import generated_post

WORKER = "portability-worker"
T0 = 1_700_000_000  # the generated history's first second (2023-11-14)


def iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(seconds))


def write_canny_zip(path: Path, posts: int, seed: int = 7) -> dict[str, int]:
    """The Canny-shaped zip of ``posts`` posts at ``path``, each list written item by item into
    its member; how many items of each list it holds."""
    rng = random.Random(seed)
    users = max(100, posts // 10)
    counts = {}

    def member(archive: zipfile.ZipFile, name: str, items) -> None:
        n = 0
        with archive.open(f"{name}.json", "w") as out:
            out.write(b"[")
            for item in items:
                out.write((b"," if n else b"") + json.dumps(item, separators=(",", ":")).encode())
                n += 1
            out.write(b"]")
        counts[name] = n

    statuses = ["open", "under review", "planned", "in progress", "complete", "closed"]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        member(archive, "boards", ({"id": f"b{b}", "name": name, "urlName": slug, "created": iso(T0)}
                                   for b, (slug, name) in enumerate((("features", "Feature requests"), ("bugs", "Bugs")))))
        member(archive, "users", ({"id": f"u{u}", "name": f"User {u}", "email": f"user{u}@import-bench.test", "isAdmin": u == 0,
                                   "created": iso(T0 + u)} for u in range(users)))

        def post_items():
            for p in range(posts):
                title, details = generated_post(rng)
                yield {"id": f"p{p}", "board": {"id": f"b{p % 7 == 0:d}"}, "status": statuses[p % len(statuses)],
                       "title": f"{title} {p}", "details": details, "author": {"id": f"u{p % users}"},
                       "created": iso(T0 + 60 * p), "tags": [], "category": None}

        member(archive, "posts", post_items())
        member(archive, "votes", ({"id": f"v{p}-{j}", "post": {"id": f"p{p}"}, "voter": {"id": f"u{(p * 5 + j) % users}"},
                                   "created": iso(T0 + 60 * p + 30 + j)} for p in range(posts) for j in range(5)))
        member(archive, "comments", ({"id": f"c{c}", "post": {"id": f"p{(c // 2) * 4 % posts}"}, "author": {"id": f"u{c % users}"},
                                      "value": f"Comment {c} on this idea", "internal": c % 10 == 9,
                                      "parentID": f"c{c - 1}" if c % 4 == 1 else None,
                                      "created": iso(T0 + 60 * ((c // 2) * 4 % posts) + 40 + c % 2)} for c in range(posts // 2)))
    return counts


def vm_hwm_mb(pid: int) -> float:
    """The peak resident memory (VmHWM) of a process tree's largest process."""
    peaks = []
    for p in process_tree(pid):
        try:
            peaks.append(next(int(line.split()[1]) for line in open(f"/proc/{p}/status") if line.startswith("VmHWM:")))
        except (OSError, StopIteration):
            pass
    return max(peaks, default=0) / 1024


def p50_p95(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"p50 {1000 * statistics.median(ordered):6.1f} ms, "
            f"p95 {1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--sizes", type=str, default=None, help="comma-separated post counts (default: posts/10,posts)")
    parser.add_argument("--api-posts", type=int, default=2000)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--data", type=Path, default=None, help="a folder for the MongoDB stand-in's data (default: in its memory)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else sorted({max(1, args.posts // 10), args.posts})

    from devstack import LocalStack

    print(f"machine: {machine()}", flush=True)
    env = {**NO_RATE_LIMITS, "PORTABILITY_POLL_SECONDS": "0.2"}
    stack = LocalStack(log_dir=Path(tempfile.mkdtemp(prefix="import-bench-")), extra_env=env,
                       mongo_storage=str(args.data) if args.data else ":memory:")
    stack.start()
    http = urllib3.PoolManager(maxsize=4)
    call = api_caller(stack.url, http)
    admin = stack.admin_token
    run = f"{int(time.time()) % 100000}"
    try:
        imported: list[str] = []
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="import-bench-file-") as folder:
                path = Path(folder) / "canny.zip"
                t = time.perf_counter()
                counts = write_canny_zip(path, size)
                print(f"\n{size} posts: the file ({', '.join(f'{v} {k}' for k, v in counts.items())}) is "
                      f"{path.stat().st_size / 2**20:.1f} MiB zipped, written in {time.perf_counter() - t:.0f} s", flush=True)
                slug = f"imp{run}-{size}"
                call("POST", "/workspaces", {"slug": slug, "name": f"Imported {size}"}, key=admin)
                worker = stack.processes[WORKER]
                worker.stop()
                worker.start()
                time.sleep(3)  # the fresh worker has started its loop
                posts_api = stack.processes["posts-api"].popen.pid
                peak_posts_rss, done = [0.0], threading.Event()

                def sample() -> None:
                    while not done.wait(1.0):
                        peak_posts_rss[0] = max(peak_posts_rss[0], max(rss_mb(p) for p in process_tree(posts_api)))

                threading.Thread(target=sample, daemon=True).start()
                # CPU the import costs where it is spent: the MongoDB stand-in, the posts API that
                # writes posts, votes and comments, the worker (what other processes spend too is
                # the rest of the platform's share: the posts worker's title vectors, mostly).
                busy = {name: stack.processes[name].popen.pid for name in ("mongo", "posts-api", WORKER, "posts-worker")}
                cpu_before = {name: cpu_seconds(pid) for name, pid in busy.items()}
                started = time.perf_counter()
                r = http.request("POST", f"{stack.url}/v1/workspaces/{slug}/imports?source=canny", body=path.read_bytes(),
                                 headers={"Content-Type": "application/zip", "Authorization": f"Bearer {admin}"}, timeout=300)
                assert r.status == 202, (r.status, r.data[:300])
                job = json.loads(r.data)
                last_print = time.perf_counter()
                while job["status"] not in ("succeeded", "failed"):
                    time.sleep(1)
                    job = call("GET", f"/workspaces/{slug}/imports/{job['id']}", key=admin)
                    if time.perf_counter() - last_print > 60:
                        last_print = time.perf_counter()
                        done_, total = job["progress"]["done"], job["progress"]["total"]
                        print(f"  ... {done_} of {total} items after {time.perf_counter() - started:.0f} s", flush=True)
                seconds = time.perf_counter() - started
                done.set()
                cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in busy.items()}
                hwm = vm_hwm_mb(worker.popen.pid)
                total = job["progress"]["total"] or 0
                print(f"{size} posts: {job['status']} in {seconds:.0f} s, {total} items, {total / seconds:.0f} items/s; "
                      f"the portability worker's peak RSS (VmHWM) {hwm:.0f} MB; the posts API's RSS at most {peak_posts_rss[0]:.0f} MB "
                      f"(sampled each second); counts {job['counts']}; {job['errorCount']} errors {job['errors'][:3]}", flush=True)
                print(f"  CPU seconds meanwhile: {', '.join(f'{name} {value:.0f}' for name, value in cpu.items())} "
                      f"({1000 * sum(cpu.values()) / max(total, 1):.0f} ms an item in all); load average {os.getloadavg()[0]:.1f}",
                      flush=True)
                imported.append(slug)

        # A board of posts made through the API, to read beside the imported ones.
        slug = f"api{run}"
        call("POST", "/workspaces", {"slug": slug, "name": "Through the API"}, key=admin)
        board = call("POST", f"/workspaces/{slug}/boards", {"slug": "features", "name": "Features"}, key=admin)
        rng = random.Random(11)
        t = time.perf_counter()
        for n in range(args.api_posts):
            title, details = generated_post(rng)
            call("POST", f"/workspaces/{slug}/posts", {"boardId": board["id"], "title": f"{title} {n}", "content": details}, key=admin)
        print(f"\n{args.api_posts} posts created through the API in {time.perf_counter() - t:.0f} s", flush=True)

        words = ["export", "dark", "import", "search", "mobile"]
        print(f"reads, {args.reads} of each (after one of each not measured):", flush=True)
        for target in [*imported, slug]:
            for label, path in (("list top", "/posts?limit=20&sort=top"), ("list newest", "/posts?limit=20&sort=newest"),
                                ("search", "/posts/search?q={word}")):
                call("GET", f"/workspaces/{target}" + path.format(word="export"), key=admin)
                times = []
                for n in range(args.reads):
                    t = time.perf_counter()
                    call("GET", f"/workspaces/{target}" + path.format(word=words[n % len(words)]), key=admin)
                    times.append(time.perf_counter() - t)
                print(f"  {target:18} {label:12} {p50_p95(times)}", flush=True)
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
