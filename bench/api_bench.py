"""The platform's API under load: each endpoint through the gateway and directly, beside the ceiling.

    .venv/bin/python bench/api_bench.py [--posts 10000] [--seconds 6] [--connections 16] [--only vote,comments]

Starts its own platform on the local stand-ins, seeds a workspace with --posts posts, then
prints, measured in this one run with wrk as its own process:
- req/s and p50/p99 per endpoint through the gateway and directly from the owning service
  (direct calls carry the internal signature the gateway would add);
- the gateway's cost: gateway/direct throughput on GET /branding (one indexed read);
- per endpoint, MongoDB round trips (pymongo command monitoring in the service) and the
  stack's own cost: latency through gateway and service minus the time the driver spent
  waiting on the database for that request (both medians of sequential requests);
- resident memory (RSS) of every process at rest and after the load.
The stand-ins are slow Python servers: what is theirs is the database time column.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import urllib3  # noqa: E402
from pymongo import MongoClient  # noqa: E402

from common import auth  # noqa: E402
from devstack import LocalStack, free_port  # noqa: E402
from testkit import Api, create_workspace, wait_for  # noqa: E402
from harness import NO_RATE_LIMITS, cpu_seconds, machine, rss_mb, start_ceiling, wait_up, wrk  # noqa: E402


# Signed header sets per direct wrk run: more than it sends in a run (each is accepted once).
SIGNED_SETS = 20_000


def seed(platform: LocalStack, slug: str, board_id: str, count: int) -> None:
    """Write posts straight into the posts database with the service's own document builder."""
    from posts.service import new_post as build_post

    caller = auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="bench")
    posts = MongoClient(platform.mongodb_uri)["feedback_posts"]["posts"]
    batch = []
    for i in range(count):
        batch.append(build_post(slug, board_id, f"Idea number {i}: improve area {i % 97}", "Seeded by the benchmark", "open", caller))
        if len(batch) == 1000:
            posts.insert_many(batch)
            batch = []
    if batch:
        posts.insert_many(batch)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--posts", type=int, default=10_000)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--only", default="", help="comma-separated words; run the endpoints whose name holds one")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    ceiling_port = free_port()
    ceiling = start_ceiling(ceiling_port)
    with tempfile.TemporaryDirectory() as logs, LocalStack(log_dir=Path(logs), extra_env=NO_RATE_LIMITS) as platform:
        api = Api(platform.url)
        ws = create_workspace(api, platform.admin_token)
        ws.settings(anonVote=True)
        board = ws.board("features", "Features")
        post = wait_for(lambda: _post(api, ws), what="the posts read model")
        seed(platform, ws.slug, board["id"], args.posts)
        rest = {name: rss_mb(p.popen.pid) for name, p in platform.processes.items()}

        manager = auth.Caller(kind=auth.MANAGER, workspace=ws.slug, key_id="bench")
        anonymous = auth.Caller(kind=auth.ANONYMOUS, user_id="anon:bench")
        p = f"/v1/workspaces/{ws.slug}"
        endpoints = [
            # name, service, method, path, body, gateway credentials, direct caller, rotate voters
            ("GET /branding", "workspaces", "GET", f"{p}/branding", None, {}, anonymous, False),
            ("GET /posts?limit=20", "posts", "GET", f"{p}/posts?limit=20", None, {}, anonymous, False),
            ("GET /posts/{id}", "posts", "GET", f"{p}/posts/{post['id']}", None, {}, anonymous, False),
            ("POST /posts", "posts", "POST", f"{p}/posts", {"boardSlug": "features", "title": "Load", "content": "From wrk"},
             {"Authorization": f"Bearer {ws.key}"}, manager, False),
            ("POST /posts/{id}/vote", "posts", "POST", f"{p}/posts/{post['id']}/vote", None, {}, None, True),
            ("POST /posts/{id}/comments", "posts", "POST", f"{p}/posts/{post['id']}/comments", {"content": "Me too"},
             {"Authorization": f"Bearer {ws.key}"}, manager, False),
            ("GET /roadmap", "posts", "GET", f"{p}/roadmap", None, {}, anonymous, False),
            ("GET /agent-context", "workspaces", "GET", f"{p}/agent-context", None, {"Authorization": f"Bearer {ws.key}"}, manager, False),
        ]
        wanted = [w for w in args.only.split(",") if w]
        endpoints = [e for e in endpoints if e[0] == "GET /branding" or not wanted or any(w in e[0] for w in wanted)]
        wait_up(f"http://127.0.0.1:{ceiling_port}/hello")
        # The posts written straight to the database have no title vector: the posts worker gives
        # them one (posts.backfill), keeping a core and the stand-in busy for a minute at 10,000
        # posts. Measured after it, or the first endpoints (the gateway's /branding) would share
        # the machine with it and the last would not.
        posts = MongoClient(platform.mongodb_uri)["feedback_posts"]["posts"]
        wait_for(lambda: posts.count_documents({"workspace": {"$exists": True}, "embeddingModel": None}) == 0,
                 timeout=900, interval=2, what="the posts' title vectors")
        ceiling_load = wrk(f"http://127.0.0.1:{ceiling_port}/hello", seconds=args.seconds, connections=args.connections)
        hop_floor = _sequential_p50(f"http://127.0.0.1:{ceiling_port}/hello")
        rows, costs = [], []
        for name, service, method, path, body, gw_headers, caller, rotate in endpoints:
            body_text = json.dumps(body) if body else None
            json_headers = {"Content-Type": "application/json"} if body else {}
            bare_path, _, query = path.partition("?")
            body_bytes = body_text.encode() if body_text else None
            if rotate:  # a new anonymous voter per request
                voters = [f"voter-{uuid.uuid4().hex}" for _ in range(3000)]
                gw_rotating = [{"X-Feedback-Anonymous-Id": v} for v in voters]
                direct_rotating = [auth.signed_headers(platform.internal_secret, service, method, bare_path, query, body_bytes,
                                                       auth.Caller(kind=auth.ANONYMOUS, user_id=f"anon:{v}")) for v in voters]
                direct_headers = {}
            else:
                # A signed request is accepted once (its nonce): wrk cycles through fresh ones.
                gw_rotating = None
                direct_rotating = [auth.signed_headers(platform.internal_secret, service, method, bare_path, query, body_bytes, caller)
                                   for _ in range(SIGNED_SETS)]
                direct_headers = {}
            run = dict(seconds=args.seconds, connections=args.connections, method=method, body=body_text)
            before = {n: cpu_seconds(p.popen.pid) for n, p in platform.processes.items()}
            through = wrk(platform.url + path, headers={**gw_headers, **json_headers}, rotating=gw_rotating, **run)
            between = {n: cpu_seconds(p.popen.pid) for n, p in platform.processes.items()}
            direct = wrk(platform.service_url(service) + path, headers={**direct_headers, **json_headers}, rotating=direct_rotating, **run)
            after = {n: cpu_seconds(p.popen.pid) for n, p in platform.processes.items()}
            if name == "GET /branding":  # CPU milliseconds per request, by process, each way
                cpu_per_request = {
                    way: {n: (end[n] - start[n]) * 1000 / (load.rps * args.seconds) for n in (service + "-api", "gateway", "mongo")}
                    for way, start, end, load in (("gateway", before, between, through), ("direct", between, after, direct))
                }
            rows.append((name, through, direct))
            # Fresh signatures; for votes, voters who have not voted yet, or this would time the
            # "voted already" path.
            signer = (lambda: auth.Caller(kind=auth.ANONYMOUS, user_id=f"anon:{uuid.uuid4().hex}")) if rotate else (lambda: caller)
            fresh = [auth.signed_headers(platform.internal_secret, service, method, bare_path, query, body_bytes, signer()) for _ in range(31)]
            costs.append((name, *_own_cost(platform, service, method, path, body, gw_headers, fresh, rotate)))
        loaded = {name: rss_mb(p.popen.pid) for name, p in platform.processes.items()}
    ceiling.terminate()

    print(f"\nposts in the workspace: {args.posts}; wrk {args.connections} connections, {args.seconds}s per run")
    print(f"ceiling (trivial Falcon JSON, same gunicorn settings): {ceiling_load}")
    print(f"\n{'endpoint':28} {'through the gateway':58} directly from the service")
    for name, through, direct in rows:
        print(f"{name:28} {str(through):58} {direct}")
    branding = rows[0]
    print(f"\ngateway cost on GET /branding: gateway/direct throughput = {branding[1].rps / branding[2].rps:.2f} (target >= 0.9)")
    for way, used in cpu_per_request.items():
        print(f"  CPU per request {way:8}: " + ", ".join(f"{n} {ms:.2f} ms" for n, ms in used.items()))
    print(f"\none HTTP hop to the trivial app, one request at a time: p50 {hop_floor:.2f} ms (a request through the "
          "gateway makes two hops)")
    print(f"\n{'endpoint':28} {'round trips':>11} {'latency p50':>12} {'db time p50':>12} {'own cost p50':>13}")
    for name, trips, latency, db_time, commands in costs:
        print(f"{name:28} {trips:>11} {latency:>10.2f}ms {db_time:>10.2f}ms {latency - db_time:>11.2f}ms  {commands}")
    print(f"\n{'process':22} {'RSS at rest':>12} {'RSS after load':>15}")
    for name in rest:
        print(f"{name:22} {rest[name]:>10.0f}MB {loaded.get(name, 0):>13.0f}MB")


# A lean client for timing one request at a time: requests adds ~0.7 ms per call on these
# machines, which is the client's cost, not the stack's.
HTTP = urllib3.PoolManager(maxsize=4)


def _send(method, url, body, headers):
    payload = json.dumps(body).encode() if body is not None else None
    if payload is not None:
        headers = {**headers, "Content-Type": "application/json"}
    return HTTP.request(method, url, body=payload, headers=headers, timeout=180, retries=False)


def _sequential_p50(url: str, count: int = 100) -> float:
    """Median milliseconds of sequential GETs (one HTTP hop's floor, with the trivial app)."""
    times = []
    for _ in range(count):
        t = time.perf_counter()
        _send("GET", url, None, {})
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _own_cost(platform, service, method, path, body, gw_headers, signed, rotating, samples: int = 30):
    """(round trips, p50 latency through the gateway, p50 database time, the commands most often
    sent) of sequential requests; ``signed``: one set of signed headers per direct request."""
    latencies, db_times, trips, commands = [], [], [], []
    # wrk leaves requests behind that the service still runs (on the stand-in a slow endpoint's
    # backlog takes tens of seconds): one untimed request waits for them. Slow endpoints get
    # fewer samples.
    if not rotating:
        _send(method, platform.service_url(service) + path, body, signed.pop())
    spent = time.monotonic() + 20
    for i in range(samples):
        if i >= 5 and time.monotonic() > spent:
            break
        r = _send(method, platform.service_url(service) + path, body, signed[i])
        trips.append(int(r.headers.get("X-Db-Round-Trips", -1)))
        commands.append(r.headers.get("X-Db-Commands", ""))
        db_times.append(float(r.headers.get("X-Db-Time-Ms", 0)))
        gw = {**gw_headers, **({"X-Feedback-Anonymous-Id": uuid.uuid4().hex} if rotating else {})}
        t = time.perf_counter()
        _send(method, platform.url + path, body, gw)
        latencies.append((time.perf_counter() - t) * 1000)
    return statistics.median(trips), statistics.median(latencies), statistics.median(db_times), statistics.mode(commands)


def _post(api, ws):
    r = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "The hot post", "content": "Vote here"})
    return r.json() if r.status_code == 201 else None


if __name__ == "__main__":
    main()
