"""Notifications end to end on ``make run``'s layout: a changelog entry shipping posts with
10,000 distinct voters (seconds to the first mail and until every mail is handed to SMTP, mails
per second, memory of the worker), and the latency from a status change to the message in the
Maildir (p50, p95).

    .venv/bin/python bench/notifications_bench.py [--voters 10000] [--posts 3] [--latency-rounds 40]
                                                  [--seed auto|api|db] [--threads 8]

Starts the platform as ``make run`` does (the lean "single" layout: the gateway, every WSGI
service and their workers in one "platform" process, whose gunicorn worker runs the
notifications consumer, mailer and scheduler as threads; mail goes to the local SMTP server,
which keeps each message as a file in a Maildir, on a thread of this process). The MongoDB
stand-in keeps its data in memory, as in the sign-in bench (``make run`` keeps it in a folder).

Settings that differ from the default install, for the whole run:

- every rate limit off (one client casts every vote);
- ``NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE=1000000``: the default (1,200 a minute) paces one
  workspace's mail by design, so 10,000 mails would take 10,000 / 1,200 = 8.3 minutes whatever
  the platform could do; the figure measured here is what it can do;
- ``NOTIFICATIONS_FOLD_SECONDS=0``: status changes are never held to be folded (by default a
  change within 10 minutes of the last mail of that post waits), so each change of the latency
  part is mailed at once.

Voters (seeding, not measured): each voter is a person with an email address, and votes on one
of ``--posts`` posts (voter i on post i mod posts), so each mail lists one post.

- ``api``: as in production, an SSO token with an ``email`` claim per voter (the identity check
  makes each a person) votes through the gateway from ``--threads`` threads; the notifications
  consumer turns each ``vote.created`` into a follow, and the bench waits for all of them;
- ``db``: the persons are written straight into the people service's ``persons`` collection and
  their follows into the notifications service's ``follows`` collection (no votes: the posts'
  vote counts stay 0; a changelog mail goes to a post's followers, which is what a vote makes);
- ``auto`` (default): the first ``--probe`` voters through the API; the rest through it too if
  that rate would seed them within ``--api-budget`` seconds, else straight into the databases.

The output says which path seeded how many. Measured: the changelog entry is created published
(``POST .../changelogs``, manager key); from its answer, the time until the first and until the
last notification (a message with ``List-Unsubscribe``) is a file in the Maildir's ``new/``
(the file's modification time: aiosmtpd writes it before it answers the DATA command, so it is
the moment the message was handed to SMTP), every voter checked to have exactly one; when the
consumer queued the first and the last mail (the queue documents' ``createdAt``); the RSS of
the platform process's gunicorn worker (the process whose threads run the consumer and the
mailer: "the worker's memory"), sampled every 0.2 s, before and at its peak during the fan-out;
the CPU each process used meanwhile. Latency: one follower of one post, its status changed
``--latency-rounds`` times; from each PATCH's answer to the message's file, p50 and p95, split
into the outbox relay, the consumer and the mailer by the event's timestamp, its Kafka record's
timestamp (read back by a consumer group of the bench's) and the queue document's ``createdAt``.
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
from concurrent.futures import ThreadPoolExecutor
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import NO_RATE_LIMITS, cpu_seconds, machine, process_tree, wait_ready  # noqa: E402

from testkit import Api, create_workspace, wait_for  # noqa: E402

PER_MINUTE_DEFAULT = 1200  # NotificationsConfig.per_workspace_per_minute's default
SETTINGS = {
    **NO_RATE_LIMITS,
    "NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE": "1000000",
    "NOTIFICATIONS_FOLD_SECONDS": "0",
}
HEADERS = BytesHeaderParser(policy=default_policy)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(share * len(ordered))) - 1))]


def gunicorn_worker(master: int) -> int:
    """The one worker (WEB_CONCURRENCY=1) of the gunicorn ``master``: the process whose threads
    run the services' consumers and workers."""
    [worker] = [pid for pid in process_tree(master) if pid != master and _parent(pid) == master]
    return worker


def _parent(pid: int) -> int:
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])


def rss_mb(pid: int) -> float:
    try:
        return next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        return 0.0


class Maildir:
    """The local SMTP server's ``new/``: which files arrived since last asked, and their headers."""

    def __init__(self, folder: Path):
        self.new = Path(folder) / "new"
        self.seen: set[str] = set(os.listdir(self.new))

    def arrived(self) -> list[Path]:
        names = set(os.listdir(self.new))
        fresh, self.seen = names - self.seen, names
        return [self.new / name for name in fresh]

    def count(self) -> int:
        return len(os.listdir(self.new))


def headers(path: Path):
    with open(path, "rb") as f:
        return HEADERS.parse(f)


def recipient(message) -> str:
    return message["To"].addresses[0].addr_spec.lower()


# -- seeding --------------------------------------------------------------------------------


def voter_email(run: str, i: int) -> str:
    return f"voter-{i}-{run}@example.com"


def vote_through_api(stack, ws, posts: list[dict], run: str, voters: range, threads: int) -> None:
    local = threading.local()

    def vote(i: int) -> None:
        if not hasattr(local, "api"):
            local.api = Api(stack.url)
        token = ws.user_token(f"voter-{i}", email=voter_email(run, i), name=f"Voter {i}")
        post = posts[i % len(posts)]
        r = local.api.post(f"{ws.path}/posts/{post['id']}/vote", user=token)
        assert r.status_code in (200, 201), r.text

    with ThreadPoolExecutor(threads) as pool:
        for _ in pool.map(vote, voters):
            pass


def seed_in_databases(client, slug: str, posts: list[dict], run: str, voters: range) -> None:
    """Persons in the people service's database, their follows in the notifications service's
    (documents built by the services' own models)."""
    from common.db import new_document
    from common.ids import now

    from notifications.models import Follow
    from people.models import Person

    at = now()
    persons = [new_document(Person, email=voter_email(run, i), name=f"Voter {i}", createdAt=at, updatedAt=at) for i in voters]
    client["feedback_people"][Person.COLLECTION].insert_many(persons)  # fills in each _id
    follows = [new_document(Follow, workspace=slug, postId=posts[i % len(posts)]["id"], personId=f"person:{p['_id']}",
                            following=True, reason="voter", at=at) for i, p in zip(voters, persons)]
    client["feedback_notifications"][Follow.COLLECTION].insert_many(follows)


def seed(stack, ws, posts, run, args, client) -> list[str]:
    """Make ``args.voters`` voters follow the posts; lines saying how."""
    follows = client["feedback_notifications"]["follows"]
    theirs = {"postId": {"$in": [p["id"] for p in posts]}}
    ws.user_token("first")  # sets the workspace's SSO secret once, before the threads sign tokens with it
    said = []
    started = time.perf_counter()
    probe = range(0, min(args.probe, args.voters)) if args.seed != "db" else range(0)
    if probe:
        vote_through_api(stack, ws, posts, run, probe, args.threads)
        wait_for(lambda: follows.count_documents(theirs) >= len(probe), timeout=600, interval=1, what="the probe's follows")
    probe_seconds = time.perf_counter() - started
    rest = range(len(probe), args.voters)
    rate = len(probe) / probe_seconds if probe else 0.0
    if probe:
        said.append(f"  {len(probe)} voters through the API (SSO token with an email claim -> person -> vote -> follow): "
                    f"{probe_seconds:.1f} s, {rate:.0f} voters/s")
    if not rest:
        return said
    through_api = args.seed == "api" or (args.seed == "auto" and len(rest) / rate <= args.api_budget)
    started = time.perf_counter()
    if through_api:
        vote_through_api(stack, ws, posts, run, rest, args.threads)
        wait_for(lambda: follows.count_documents(theirs) >= args.voters, timeout=3600, interval=2, what="every follow")
        how = "through the API, as above"
    else:
        seed_in_databases(client, ws.slug, posts, run, rest)
        why = f" (at {rate:.0f} voters/s the API would take {len(rest) / rate:.0f} s)" if rate else ""
        how = f"written straight into people's persons and notifications' follows{why}"
    said.append(f"  {len(rest)} voters {how}: {time.perf_counter() - started:.1f} s")
    return said


# -- the measurements -----------------------------------------------------------------------


class Sampler:
    """Samples a process's RSS every ``every`` seconds on a thread until stopped."""

    def __init__(self, pid: int, every: float = 0.2):
        self.pid, self.every, self.samples = pid, every, [rss_mb(pid)]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self.samples.append(rss_mb(self.pid))

    def done(self) -> list[float]:
        self.stop.set()
        self.thread.join()
        return self.samples


def fan_out(stack, ws, posts, run, args, worker_pid: int, client) -> list[str]:
    maildir = Maildir(stack.mail_dir)
    before = rss_mb(worker_pid)
    cpu_before = {name: cpu_seconds(p.popen.pid) for name, p in stack.processes.items() if p.alive()}
    cpu_before["bench (SMTP server)"] = sum(os.times()[:2])
    sampler = Sampler(worker_pid)
    r = ws.api.post(f"{ws.path}/changelogs", key=ws.key, json={
        "slug": f"release-{run}", "title": "The big release", "content": "Everything you asked for.",
        "postIds": [p["id"] for p in posts], "publish": True})
    assert r.status_code == 201, r.text
    answered = time.time()
    arrivals: dict[Path, float] = {}
    deadline = time.monotonic() + max(900, args.voters / 5)
    while len(arrivals) < args.voters:
        if time.monotonic() > deadline:
            raise AssertionError(f"only {len(arrivals)} of {args.voters} mails arrived in time")
        for path in maildir.arrived():
            arrivals[path] = path.stat().st_mtime
        time.sleep(0.1)
    peak = max(sampler.done())
    cpu = {name: cpu_seconds(p.popen.pid) - cpu_before[name] for name, p in stack.processes.items() if name in cpu_before}
    cpu["bench (SMTP server)"] = sum(os.times()[:2]) - cpu_before["bench (SMTP server)"]
    time.sleep(3)  # anything more (a duplicate) would arrive now
    for path in maildir.arrived():
        arrivals[path] = path.stat().st_mtime

    parsed = [headers(path) for path in arrivals]
    notifications = [m for m in parsed if "List-Unsubscribe" in m]
    to = [recipient(m) for m in notifications]
    expected = {voter_email(run, i) for i in range(args.voters)}
    distinct = set(to)
    assert len(notifications) == len(to) == args.voters and distinct == expected, (
        f"{len(notifications)} notifications to {len(distinct)} addresses; missing {len(expected - distinct)}, "
        f"unexpected {len(distinct - expected)}")
    first, last = min(arrivals.values()) - answered, max(arrivals.values()) - answered
    queue = client["feedback_notifications"]["mail"]
    created = [d["createdAt"].timestamp() for d in queue.find({"key": {"$regex": "^changelog:"}}, {"createdAt": 1})]
    queued_first, queued_last = min(created) - answered, max(created) - answered
    busy = ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(cpu.items(), key=lambda kv: -kv[1]) if seconds >= 0.05)
    return [
        f"  {len(notifications)} mails, {len(distinct)} distinct recipients, every voter exactly one: yes",
        f"  queued (the consumer's fan-out): first {queued_first:.1f} s, last {queued_last:.1f} s after the publish's answer",
        f"  first mail in the Maildir {first:.1f} s, every mail handed to SMTP {last:.1f} s after the publish's answer",
        f"  {args.voters / last:.0f} mails/s end to end; {(args.voters - 1) / (last - first):.0f} mails/s from the first to the last",
        f"  the platform process's gunicorn worker (pid {worker_pid}: the consumer and mailer threads): "
        f"RSS {before:.0f} MB before, peak {peak:.0f} MB during the fan-out (+{peak - before:.0f} MB)",
        f"  CPU seconds during the fan-out: {busy}",
    ]


def latency(stack, ws, run, rounds: int, client) -> list[str]:
    """One follower; the post's status changed ``rounds`` times; each time from the PATCH's
    answer to the message's file in the Maildir."""
    r = ws.api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "Latency probe", "content": "Status mail"})
    assert r.status_code == 201, r.text
    post = r.json()
    email = f"follower-{run}@example.com"
    token = ws.user_token("follower", email=email)
    assert ws.api.post(f"{ws.path}/posts/{post['id']}/vote", user=token).status_code in (200, 201)
    follows = client["feedback_notifications"]["follows"]
    wait_for(lambda: follows.find_one({"postId": post["id"]}), timeout=60, what="the follower's follow")
    maildir = Maildir(stack.mail_dir)
    waits = []
    for n in range(rounds):
        status = ("planned", "in-progress")[n % 2]
        r = ws.api.patch(f"{ws.path}/posts/{post['id']}", key=ws.key, json={"statusSlug": status})
        assert r.status_code == 200, r.text
        answered = time.time()
        deadline = time.monotonic() + 60
        arrived = None
        while arrived is None:
            assert time.monotonic() < deadline, f"round {n}: no status mail within 60 s"
            for path in maildir.arrived():
                message = headers(path)
                if "List-Unsubscribe" in message and recipient(message) == email and "is now" in str(message["Subject"]):
                    arrived = path.stat().st_mtime
            time.sleep(0.01)
        waits.append((answered, arrived))
        time.sleep(0.2)
    # Where the time went, per change: the event written with the post (its timestamp), sent to
    # Kafka by the posts service's outbox relay (the record's timestamp), the mail queued by the
    # notifications consumer (its queue document's createdAt), handed to SMTP (the file).
    sent = relayed_at(stack, post["id"], rounds)
    queued = [d["createdAt"].timestamp() for d in client["feedback_notifications"]["mail"].find({"to": email}).sort("createdAt", 1)]
    assert len(queued) == len(sent) == rounds, f"{len(sent)} events and {len(queued)} mails for {rounds} changes"
    total = [(arrived - answered) * 1000 for answered, arrived in waits]
    parts = {
        "written -> in Kafka (outbox relay)": [(k - w) * 1000 for w, k in sent],
        "in Kafka -> mail queued (consumer)": [(q - k) * 1000 for (_, k), q in zip(sent, queued)],
        "queued -> in the Maildir (mailer, SMTP)": [(a - q) * 1000 for (_, a), q in zip(waits, queued)],
    }
    return [f"  {rounds} status changes, one follower: p50 {statistics.median(total):.0f} ms, "
            f"p95 {percentile(total, 0.95):.0f} ms, slowest {max(total):.0f} ms (from the PATCH's answer)",
            *(f"    {part}: p50 {statistics.median(ms):.0f} ms, p95 {percentile(ms, 0.95):.0f} ms" for part, ms in parts.items())]


def relayed_at(stack, post_id: str, rounds: int) -> list[tuple[float, float]]:
    """``(written, in Kafka)`` of each status change of ``post_id``, oldest first: the event's
    timestamp, and its record's (the relay's send) as a fresh consumer group reads them back."""
    from datetime import datetime

    from common.config import Settings
    from common.kafka import make_consumer

    consumer = make_consumer(Settings(kafka_bootstrap_servers=stack.kafka_bootstrap), f"bench-{post_id}", ["feedback.posts"])
    found: list[tuple[float, float]] = []
    deadline = time.monotonic() + 60
    try:
        while len(found) < rounds and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                for record in records:
                    event = json.loads(record.value)
                    if event["type"] == "post.status_changed" and event["data"]["post"]["id"] == post_id:
                        written = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
                        found.append((written, record.timestamp / 1000))
    finally:
        consumer.close(autocommit=False)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--voters", type=int, default=10_000)
    parser.add_argument("--posts", type=int, default=3)
    parser.add_argument("--latency-rounds", type=int, default=40)
    parser.add_argument("--seed", choices=("auto", "api", "db"), default="auto")
    parser.add_argument("--probe", type=int, default=300, help="voters seeded through the API first (auto, api)")
    parser.add_argument("--api-budget", type=float, default=240, help="seconds of API seeding 'auto' accepts")
    parser.add_argument("--threads", type=int, default=8, help="voting threads")
    args = parser.parse_args()

    import uuid

    from pymongo import MongoClient

    from devstack import LocalStack

    folder = Path(tempfile.mkdtemp(prefix="notifications-bench-"))
    (folder / "logs").mkdir()
    stack = LocalStack(layout="single", log_dir=folder / "logs", mail_dir=folder / "mail", extra_env=SETTINGS)
    stack.start()
    try:
        wait_ready(f"{stack.url}/readyz")
        client = MongoClient(stack.mongodb_uri, tz_aware=True)
        ws = create_workspace(Api(stack.url), stack.admin_token, name="Bench")
        ws.board()
        run = uuid.uuid4().hex[:6]
        posts = []
        for n in range(args.posts):
            r = ws.api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": f"Request {n}", "content": "Please"})
            assert r.status_code == 201, r.text
            posts.append(r.json())
        platform = stack.processes["platform"].popen.pid
        worker = gunicorn_worker(platform)
        print(f"{machine()}\nnotifications, make run's layout (single process; MongoDB stand-in in memory); "
              f"settings: every rate limit off, NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE=1000000, NOTIFICATIONS_FOLD_SECONDS=0",
              flush=True)
        print("latency, status change -> message in the Maildir (fold window 0: never held):", flush=True)
        for line in latency(stack, ws, run, args.latency_rounds, client):
            print(line, flush=True)
        print(f"seeding {args.voters} voters over {args.posts} posts (not measured):", flush=True)
        for line in seed(stack, ws, posts, run, args, client):
            print(line, flush=True)
        print(f"changelog entry shipping {args.posts} posts to {args.voters} distinct voters:", flush=True)
        for line in fan_out(stack, ws, posts, run, args, worker, client):
            print(line, flush=True)
        print(f"  at the default NOTIFICATIONS_PER_WORKSPACE_PER_MINUTE ({PER_MINUTE_DEFAULT}) the same "
              f"{args.voters} mails would be paced over {args.voters / PER_MINUTE_DEFAULT:.1f} minutes, by design")
        print(f"logs: {folder / 'logs'}")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
