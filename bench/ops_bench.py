"""What a board's everyday operations cost on the default install (`make run`'s layout).

    .venv/bin/python bench/ops_bench.py [--posts 10000] [--votes 2000] [--voters 50] [--requests 300]
                                        [--rounds 2] [--settle 60] [--rest 60] [--data DIR]

Starts the platform as ``make run`` does (one process for the gateway and the services, the
local MongoDB and Kafka stand-ins), seeds one board through the API (``--posts`` posts by a
manager key, ``--votes`` votes by ``--voters`` end users with SSO tokens), then prints, for an
end user with an ``X-Feedback-User`` token, one request at a time:

- p50/p95 of each operation over ``--requests`` requests: list newest (20), list top votes (20),
  read one post, the post page (the post, then its comments), create a post, vote, comment;
- the server's CPU per request of each operation, split by process (from /proc), counted until the
  processes are idle again: what a write leaves to do after its answer is its own cost, not the next
  operation's latency;
- list throughput at 16 connections for 15 s (wrk);
- at rest, after ``--settle`` seconds: memory (PSS of every process, from smaps_rollup) and CPU
  over ``--rest`` seconds;
- stopped to healthy with the data (every process stopped, then started on the same folder).

Each round runs twice: budgets counted (every quota raised so none refuses: what counting costs)
and budgets off (``0/60``: the counting's share is the difference). ``--data DIR`` keeps the
seeded stand-in's data: a second run skips the seeding.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jwt  # noqa: E402
import urllib3  # noqa: E402

from devstack import LocalStack, data_folder_secrets  # noqa: E402
from harness import ensure_wrk, machine, process_tree, wait_up, wrk  # noqa: E402
from testkit.fixtures import RATE_LIMIT_SETTINGS  # noqa: E402

RAISED = {name: "1000000/60" for name in RATE_LIMIT_SETTINGS}
OFF = {name: "0/60" for name in RATE_LIMIT_SETTINGS}
SLUG = "bench-ops"
HTTP = urllib3.PoolManager(maxsize=16, retries=False, timeout=urllib3.Timeout(connect=5, read=120))


def p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return 1000 * statistics.median(ordered), 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def cpu_ticks(pids: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds (user + system) each named group of processes has used so far."""
    tick = os.sysconf("SC_CLK_TCK")
    used = {}
    for name, group in pids.items():
        total = 0
        for pid in group:
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                pass
        used[name] = total / tick
    return used


def pss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            total += next(int(line.split()[1]) for line in open(f"/proc/{pid}/smaps_rollup") if line.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


class Client:
    def __init__(self, base: str, headers: dict[str, str]):
        self.base = base
        self.headers = {"Content-Type": "application/json", **headers}

    def call(self, method: str, path: str, body=None, ok=(200, 201)) -> dict:
        r = HTTP.request(method, self.base + path, body=json.dumps(body) if body is not None else None, headers=self.headers)
        if r.status not in ok:
            raise RuntimeError(f"{method} {path}: {r.status} {r.data[:300]!r}")
        return json.loads(r.data) if r.data else {}


def user_token(secret: str, user: int) -> str:
    claims = {"id": f"bench-user-{user}", "email": f"bench-user-{user}@example.com", "name": f"User {user}",
              "aud": SLUG, "exp": int(time.time()) + 20 * 3600}
    return jwt.encode(claims, secret, algorithm="HS256")


def start(data: Path, limits: dict[str, str]) -> LocalStack:
    """The platform as ``make run`` starts it, on ``data``, with these budgets."""
    kept = data_folder_secrets(data, {})
    stack = LocalStack(layout="single", mongo_storage=str(data / "mongo"), mail_dir=data / "mail", log_dir=data / "logs",
                       extra_env=limits, admin_token=kept["FEEDBACK_ADMIN_TOKEN"], internal_secret=kept["INTERNAL_SECRET"],
                       gateway_secret=kept["GATEWAY_SECRET"], web_cookie_secret=kept["WEB_COOKIE_SECRET"],
                       secrets_keys=kept["SECRETS_KEYS"])
    (data / "logs").mkdir(parents=True, exist_ok=True)
    return stack.start()


def seed(stack: LocalStack, data: Path, posts: int, votes: int, voters: int) -> dict:
    """The workspace, its board and posts, through the API; kept in ``data/seed.json``."""
    kept = data / "seed.json"
    if kept.exists():
        return json.loads(kept.read_text())
    admin = Client(stack.url + "/v1", {"Authorization": f"Bearer {stack.admin_token}"})
    key = admin.call("POST", "/workspaces", {"slug": SLUG, "name": "Bench"})["apiKey"]
    manager = Client(stack.url + "/v1", {"Authorization": f"Bearer {key}"})
    secret = "bench-sso-secret-" + uuid.uuid4().hex
    w = f"/workspaces/{SLUG}"
    manager.call("PATCH", w + "/settings", {"ssoSecret": secret})
    manager.call("POST", w + "/boards", {"slug": "features", "name": "Features"})
    began = time.monotonic()
    ids: list[str] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        for attempt in range(5):
            try:
                post = manager.call("POST", w + "/posts", {"boardSlug": "features", "title": f"Idea {i}: improve area {i % 97}",
                                                         "content": f"Seeded post {i} of the operations bench."})
                break
            except RuntimeError:
                if attempt == 4:
                    raise
                time.sleep(1)
        with lock:
            ids.append(post["id"])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(posts)))
    print(f"seeded {posts} posts in {time.monotonic() - began:.0f} s", flush=True)
    tokens = [user_token(secret, u) for u in range(voters)]
    began = time.monotonic()

    def vote(n: int) -> None:
        user = Client(stack.url + "/v1", {"X-Feedback-User": tokens[n % voters]})
        user.call("POST", f"{w}/posts/{ids[(n * 7919) % len(ids)]}/vote", ok=(200, 201))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(vote, range(votes)))
    print(f"seeded {votes} votes in {time.monotonic() - began:.0f} s", flush=True)
    seeded = {"key": key, "secret": secret, "posts": ids}
    kept.write_text(json.dumps(seeded))
    return seeded


def groups(stack: LocalStack) -> dict[str, list[int]]:
    return {name: process_tree(p.popen.pid) for name, p in stack.processes.items()}


def settle(pids: dict[str, list[int]], idle_cores: float = 0.15, most: float = 60) -> float:
    """Wait until the processes are idle again (under ``idle_cores`` over half a second): what an
    operation leaves to do after its answer (events, follows, suggestions) is then counted in its
    own CPU per request, and not in the next operation's latency. Seconds waited."""
    began = time.monotonic()
    while time.monotonic() - began < most:
        before = cpu_ticks(pids)
        time.sleep(0.5)
        after = cpu_ticks(pids)
        if sum(after.values()) - sum(before.values()) < idle_cores * 0.5:
            break
    return time.monotonic() - began


def measure(stack: LocalStack, seeded: dict, requests: int, label: str) -> None:
    w = f"/v1/workspaces/{SLUG}"
    token = user_token(seeded["secret"], 10_000 + int(time.time()) % 100_000)  # a user new to the board
    user = Client(stack.url, {"X-Feedback-User": token})
    posts = seeded["posts"]
    # The page's post: one with comments, commented by the same user.
    page_post = posts[len(posts) // 2]
    for i in range(5):
        user.call("POST", f"{w}/posts/{page_post}/comments", {"content": f"A comment {i}"})
    fresh = iter(posts[(requests * round(time.time())) % len(posts):] + posts)
    created: list[str] = []
    operations = {
        "list newest, 20": lambda i: user.call("GET", f"{w}/posts?sort=newest&limit=20"),
        "list top votes, 20": lambda i: user.call("GET", f"{w}/posts?sort=top&limit=20"),
        "read one post": lambda i: user.call("GET", f"{w}/posts/{posts[(i * 31) % len(posts)]}"),
        "post page (post, then comments)": lambda i: (user.call("GET", f"{w}/posts/{page_post}"),
                                                      user.call("GET", f"{w}/posts/{page_post}/comments")),
        "create a post": lambda i: created.append(user.call("POST", f"{w}/posts", {
            "boardSlug": "features", "title": f"Bench idea {uuid.uuid4().hex[:8]}", "content": "Created by the operations bench."})["id"]),
        "vote": lambda i: user.call("POST", f"{w}/posts/{next(fresh)}/vote"),
        "comment": lambda i: user.call("POST", f"{w}/posts/{posts[(i * 17) % len(posts)]}/comments", {"content": "Me too."}),
    }
    pids = groups(stack)
    print(f"\n[{label}] {requests} requests per operation, one at a time", flush=True)
    print(f"{'operation':34} {'p50 ms':>8} {'p95 ms':>8}   CPU ms per request by process")
    for name, op in operations.items():
        for i in range(5):  # warm
            op(10_000 + i)
        before = cpu_ticks(pids)
        times = []
        for i in range(requests):
            began = time.perf_counter()
            op(i)
            times.append(time.perf_counter() - began)
        settled = settle(pids)
        after = cpu_ticks(pids)
        p50, p95 = p50_p95(times)
        cpu = {n: 1000 * (after[n] - before[n]) / requests for n in pids}
        shown = ", ".join(f"{n} {v:.1f}" for n, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v >= 0.5)
        print(f"{name:34} {p50:8.1f} {p95:8.1f}   total {sum(cpu.values()):.1f}: {shown}; settled {settled:.1f} s", flush=True)
    load = wrk(f"{stack.url}{w}/posts?sort=newest&limit=20", seconds=15, connections=16, headers={"X-Feedback-User": token})
    print(f"{'list newest, 16 connections':34} {load}", flush=True)


def at_rest(stack: LocalStack, settle: float, rest: float) -> None:
    time.sleep(settle)
    pids = groups(stack)
    every = [p for group in pids.values() for p in group]
    before = cpu_ticks(pids)
    time.sleep(rest)
    after = cpu_ticks(pids)
    cores = {n: (after[n] - before[n]) / rest for n in pids}
    print(f"\nat rest: PSS {pss_mb(every):.0f} MB in all ("
          + ", ".join(f"{n} {pss_mb(g):.0f}" for n, g in pids.items()) + ")")
    print(f"at rest: CPU {sum(cores.values()):.3f} cores over {rest:.0f} s ("
          + ", ".join(f"{n} {c:.3f}" for n, c in sorted(cores.items(), key=lambda kv: -kv[1])) + ")", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--posts", type=int, default=10_000)
    parser.add_argument("--votes", type=int, default=2_000)
    parser.add_argument("--voters", type=int, default=50)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--settle", type=float, default=60)
    parser.add_argument("--rest", type=float, default=60)
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    ensure_wrk()
    data = args.data or Path(tempfile.mkdtemp(prefix="ops-bench-"))
    data.mkdir(parents=True, exist_ok=True)
    stack = start(data, RAISED)
    try:
        seeded = seed(stack, data, args.posts, args.votes, args.voters)
    finally:
        stack.stop()
    for round_ in range(1, args.rounds + 1):
        for label, limits in (("budgets counted", RAISED), ("budgets off", OFF)):
            began = time.monotonic()
            stack = start(data, limits)
            wait_up(stack.url + "/healthz")
            print(f"\n== round {round_}, {label}: stopped to healthy with the data in {time.monotonic() - began:.1f} s", flush=True)
            try:
                measure(stack, seeded, args.requests, f"round {round_}, {label}")
                if label == "budgets counted":
                    at_rest(stack, args.settle, args.rest)
            finally:
                stack.stop()


if __name__ == "__main__":
    main()
