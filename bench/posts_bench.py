"""Posts service benchmark: search quality and latency at 10,000 posts, and throughput.

    .venv/bin/python bench/posts_bench.py [--posts 10000]

Starts its own platform (devstack.LocalStack: SecantusDB, Tansu, every service,
the gateway), then prints figures only:

- recall@5 of /posts/search on bench/data/duplicates.json (hand-written feedback posts in
  known duplicate groups), each post's title as the query, among 10,000 posts of one
  workspace (the labeled ones go through POST /posts; the rest are generated look-alike
  feedback, written straight to the database with the service's own document builder);
- p50/p95 latency of those searches through the gateway;
- (throughput of every endpoint beside the trivial-Falcon ceiling is bench/api_bench.py's);
- for context on real MongoDB: the database round trips per request (X-Db-Round-Trips,
  asked of the service directly) and the latency of the same page query sent straight to
  the local MongoDB-protocol server with pymongo, so the stack's own cost can be told
  apart from the stand-in's slow sorted pages.
"""

from __future__ import annotations

import argparse
import json
from urllib.parse import urlencode
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import urllib3

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "duplicates.json"


# -- generated feedback (the haystack) ----------------------------------------------------

VERBS = ["Improve", "Add", "Fix", "Allow", "Support", "Show", "Hide", "Rework", "Simplify", "Speed up",
         "Redesign", "Let admins configure", "Make it easier to use", "Better", "Clean up", "Customize"]
OBJECTS = ["the sidebar", "project settings", "the onboarding flow", "team invitations", "the mobile layout",
           "notifications", "the search bar", "the reports page", "the billing page", "user profiles",
           "comment threads", "the editor toolbar", "file previews", "the activity feed", "the admin panel",
           "email templates", "task reminders", "the calendar view", "API rate limits", "the import wizard",
           "dashboard widgets", "keyboard navigation", "export options", "the login page", "the integrations list",
           "status labels", "the roadmap page", "board permissions", "the changelog", "the public portal",
           "the vote button", "post descriptions", "tag management", "the help center", "account settings",
           "audit logs", "the pricing page", "webhook settings", "guest access", "the timeline"]
QUALIFIERS = ["for large teams", "on Android", "in Safari", "when offline", "for admins", "on small screens",
              "with many items", "in dark mode", "for guests", "after the last update", "for enterprise plans",
              "in the mobile app", "for new users", "with a keyboard", "on slow connections", "", "", ""]
BODIES = ["It would save us a lot of time.", "Our team runs into this every day.", "Compared to other tools this is missing.",
          "Customers keep asking about it.", "Right now we use a workaround.", "This blocks our rollout."]


def generated_post(rng: random.Random) -> tuple[str, str]:
    title = " ".join(p for p in (rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(QUALIFIERS)) if p)
    return title, " ".join(rng.sample(BODIES, 2))


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"p50_ms": None, "p95_ms": None}
    ordered = sorted(values)
    return {"p50_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]}


# -- the run -----------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--posts", type=int, default=10_000)
    args = parser.parse_args()

    from bson import ObjectId
    from pymongo import MongoClient

    from common import auth
    from devstack import LocalStack
    from posts.service import new_post as build_post

    logs = Path(tempfile.mkdtemp(prefix="posts-bench-"))
    from harness import NO_RATE_LIMITS

    stack = LocalStack(log_dir=logs, extra_env=NO_RATE_LIMITS)
    stack.start()
    try:
        http = urllib3.PoolManager(maxsize=16)
        base = stack.url + "/v1"

        def call(method, path, body=None, key=None):
            headers = {"Content-Type": "application/json"}
            if key:
                headers["Authorization"] = f"Bearer {key}"
            r = http.request(method, base + path, body=json.dumps(body) if body is not None else None, headers=headers, timeout=60)
            return r.status, json.loads(r.data or b"null")

        slug = f"bench-{uuid.uuid4().hex[:6]}"
        status, created = call("POST", "/workspaces", {"slug": slug, "name": "Bench"}, stack.admin_token)
        assert status == 201, created
        key = created["apiKey"]
        status, board = call("POST", f"/workspaces/{slug}/boards", {"slug": "features", "name": "Features"}, key)
        assert status == 201, board

        # Labeled posts through the API.
        groups = json.loads(DATA.read_text())["groups"]
        labeled = []  # (post id, group, title)
        for g in groups:
            for title in g["posts"]:
                status, post = call("POST", f"/workspaces/{slug}/posts", {"boardSlug": "features", "title": title, "content": ""}, key)
                assert status == 201, post
                labeled.append((post["id"], g["id"], title))

        # The haystack, straight into the database with the service's document builder.
        rng = random.Random(7)
        manager = auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="bench")
        db = MongoClient(stack.mongodb_uri)["feedback_posts"]
        docs = []
        for _ in range(args.posts - len(labeled)):
            title, content = generated_post(rng)
            docs.append(build_post(slug, board["id"], title, content, "open", manager))
            if len(docs) == 1000:
                db.posts.insert_many(docs)
                docs = []
        if docs:
            db.posts.insert_many(docs)
        total = db.posts.count_documents({"workspace": slug})

        # Search quality and latency.
        members = {}
        for pid, group, _ in labeled:
            members.setdefault(group, set()).add(pid)
        recalls, latencies, own = [], [], []
        search_path = f"/v1/workspaces/{slug}/posts/search"
        anonymous_caller = auth.Caller(kind=auth.ANONYMOUS, user_id="anon:bench")
        for pid, group, title in labeled:
            t = time.perf_counter()
            r = http.request("GET", f"{base}/workspaces/{slug}/posts/search", fields={"q": title, "limit": "6"}, timeout=60)
            latencies.append(time.perf_counter() - t)
            # The same search asked of the service: its latency minus the driver's database time
            # is the service's own part (scoring, shaping), which carries over to real MongoDB.
            t = time.perf_counter()
            query = urlencode({"q": title, "limit": "6"})
            anonymous = auth.signed_headers(stack.internal_secret, "posts", "GET", search_path, query, None, anonymous_caller)
            d = http.request("GET", f"{stack.service_url('posts')}{search_path}?{query}", headers=anonymous, timeout=60)
            own.append(time.perf_counter() - t - float(d.headers["X-Db-Time-Ms"]) / 1000)
            found = [i["id"] for i in json.loads(r.data)["items"] if i["id"] != pid][:5]
            mates = members[group] - {pid}
            recalls.append(len(set(found) & mates) / min(5, len(mates)))
        search = percentiles(latencies)

        # Round trips per request, asked of the posts service directly (the gateway hides the header).
        def round_trips(method, path, body=None):
            data = json.dumps(body).encode() if body else None
            bare, _, query = path.partition("?")
            counts = []
            for _ in range(3):
                headers = {**auth.signed_headers(stack.internal_secret, "posts", method, bare, query, data, manager), "Content-Type": "application/json"}
                r = http.request(method, stack.service_url("posts") + path, body=data, headers=headers, timeout=60)
                counts.append(int(r.headers.get("X-Db-Round-Trips", -1)))
            return min(counts)

        trips_list = round_trips("GET", f"/v1/workspaces/{slug}/posts?limit=20")
        trips_search = round_trips("GET", f"/v1/workspaces/{slug}/posts/search?q=dark+mode")
        trips_create = round_trips("POST", f"/v1/workspaces/{slug}/posts", {"boardSlug": "features", "title": "t", "content": "c"})

        # One request at a time: GET /posts through the gateway vs the same queries sent
        # straight to the database; the difference is the stack's own cost per request.
        direct, via_gateway = [], []
        for _ in range(5):
            t = time.perf_counter()
            page = list(db.posts.find({"workspace": slug, "listed": True}, projection={"terms": 0, "titleTerms": 0},
                                      sort=[("createdAt", -1), ("_id", -1)], limit=20))
            list(db.votes.find({"userId": "anon:x", "countsFor": {"$in": [str(d["_id"]) for d in page]}}))
            direct.append(time.perf_counter() - t)
            t = time.perf_counter()
            http.request("GET", f"{base}/workspaces/{slug}/posts?limit=20", timeout=60)
            via_gateway.append(time.perf_counter() - t)

        print(f"posts in workspace:              {total}")
        print(f"labeled posts / groups:          {len(labeled)} / {len(groups)}")
        print(f"search recall@5:                 {statistics.mean(recalls):.3f}")
        print(f"search latency p50 / p95:        {search['p50_ms']:.0f} ms / {search['p95_ms']:.0f} ms")
        own_search = percentiles(own)
        print(f"  service's own part p50 / p95:  {own_search['p50_ms']:.0f} ms / {own_search['p95_ms']:.0f} ms "
              "(the service's latency minus its database time; the rest is the stand-in's)")
        print(f"db round trips: list / search / create: {trips_list} / {trips_search} / {trips_create} (commit included)")
        one_id = labeled[0][0]
        direct_one, gateway_one = [], []
        for _ in range(20):
            t = time.perf_counter()
            db.posts.find_one({"_id": ObjectId(one_id), "workspace": slug})
            list(db.votes.find({"userId": "anon:x", "countsFor": {"$in": [one_id]}}))
            direct_one.append(time.perf_counter() - t)
            t = time.perf_counter()
            http.request("GET", f"{base}/workspaces/{slug}/posts/{one_id}", timeout=60)
            gateway_one.append(time.perf_counter() - t)
        d, g = 1000 * statistics.median(direct), 1000 * statistics.median(via_gateway)
        d1, g1 = 1000 * statistics.median(direct_one), 1000 * statistics.median(gateway_one)
        print(f"GET /posts?limit=20 one at a time: {g:.0f} ms via gateway, {d:.0f} ms for its queries sent straight "
              f"to the db: stack's own cost ~{g - d:.0f} ms")
        print(f"GET /posts/{{id}} one at a time:  {g1:.1f} ms via gateway, {d1:.1f} ms for its queries straight to the db: "
              f"stack's own cost ~{g1 - d1:.1f} ms")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
