"""Webhook delivery: deliveries/s with 1 and with 2 dispatcher processes, and event-to-delivery
latency, against a local receiver.

Starts its own platform (local MongoDB/Kafka stand-ins). Per dispatcher count:
- throughput: N `changelog.published` events, spread over 8 workspaces with one endpoint each,
  are injected into Kafka the way the outbox relay publishes them (so the figure is the
  dispatchers' rate, not the API's), and deliveries/s is read off the receiver between the
  10th and the 90th percentile of arrivals;
- latency: changelogs are published through the gateway at a steady rate; latency is the
  receiver's arrival time minus the event's timestamp (set when the API wrote the event),
  so it covers outbox, relay, Kafka, recording and the signed POST.

Run: `make bench` or `.venv/bin/python bench/webhooks_bench.py [--events N] [--slow-ms D]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common.config import Settings  # noqa: E402
from devstack import LocalStack  # noqa: E402
from common.events import envelope  # noqa: E402
from common.kafka import make_producer, publish  # noqa: E402
from testkit import Api, create_workspace, unique_slug, wait_for  # noqa: E402
from harness import NO_RATE_LIMITS, machine  # noqa: E402
from kafka.partitioner.default import murmur2  # noqa: E402

WORKSPACES = 8
FEEDBACK = str(Path(sys.executable).with_name("feedback"))  # the console script beside this interpreter
CONCURRENCY = 16


class Receiver:
    """Answers every POST with 200 (after ``delay`` seconds, changeable) and notes arrivals."""

    def __init__(self, delay: float):
        self.delay = delay
        self.arrivals: list[tuple[float, float, str, str]] = []  # (monotonic, wall, webhook-id, event timestamp)
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                mono, wall = time.monotonic(), time.time()
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with receiver.lock:
                    receiver.arrivals.append((mono, wall, self.headers.get("webhook-id"), json.loads(body)["timestamp"]))

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/bench"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self) -> list[tuple[float, float, str, str]]:
        with self.lock:
            taken, self.arrivals = self.arrivals, []
        return taken

    def count(self) -> int:
        with self.lock:
            return len(self.arrivals)


def cpu_by_process(platform: LocalStack) -> dict[str, float]:
    """CPU seconds used so far by each process group of the platform, and by this process."""
    ticks = os.sysconf("SC_CLK_TCK")
    groups = {p.popen.pid: name for name, p in platform.processes.items() if p.alive()}
    used = dict.fromkeys(groups.values(), 0.0)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = groups.get(int(fields[2]))  # the process group
        if name:
            used[name] += (int(fields[11]) + int(fields[12])) / ticks
    used["bench (receiver, producer)"] = sum(os.times()[:2])
    return used


def balanced_slugs(partitions: int, per_partition: int) -> list[str]:
    """Workspace slugs that the producer's partitioner spreads evenly over the partitions, so
    the figure measures the dispatchers and not how a handful of names happen to hash."""
    by_partition: dict[int, list[str]] = {p: [] for p in range(partitions)}
    while any(len(v) < per_partition for v in by_partition.values()):
        slug = unique_slug("bench")
        bucket = by_partition[(murmur2(slug.encode()) & 0x7FFFFFFF) % partitions]
        if len(bucket) < per_partition:
            bucket.append(slug)
    return [slug for slugs in by_partition.values() for slug in slugs]


def start_dispatchers(platform: LocalStack, count: int) -> list:
    return [platform.spawn(f"dispatcher-{count}-{i}", [FEEDBACK, "worker", "webhooks", "dispatcher"]) for i in range(count)]


def throughput(platform: LocalStack, receiver: Receiver, slugs: list[str], events: int) -> float:
    producer = make_producer(Settings(kafka_bootstrap_servers=platform.kafka_bootstrap))
    for n in range(events):
        slug = slugs[n % len(slugs)]
        data = {"id": f"{n:024x}", "title": f"Release {n}", "slug": f"release-{n}", "content": "Shipped **things**.",
                "publishedAt": None, "postIds": [], "createdAt": None}
        publish(producer, "feedback.workspaces", envelope("changelog.published", slug, data), key=slug)
    producer.flush(30)
    producer.close()
    wait_for(lambda: receiver.count() >= events, timeout=600, interval=0.2, what=f"{events} deliveries")
    arrivals = sorted(a[0] for a in receiver.take())
    lo, hi = arrivals[len(arrivals) // 10], arrivals[len(arrivals) * 9 // 10]
    return (len(arrivals) * 0.8) / (hi - lo)


def latency(api: Api, workspaces: list, receiver: Receiver, count: int, rate: float) -> list[float]:
    started = time.monotonic()
    for n in range(count):
        ws = workspaces[n % len(workspaces)]
        r = api.post(f"{ws.path}/changelogs", key=ws.key,
                     json={"title": "T", "slug": f"lat-{time.time_ns()}", "content": "c", "publish": True})
        assert r.status_code == 201, r.text
        time.sleep(max(0.0, started + (n + 1) / rate - time.monotonic()))
    wait_for(lambda: receiver.count() >= count, timeout=120, interval=0.1, what="latency deliveries")
    return sorted(
        wall - datetime.fromisoformat(ts).astimezone(timezone.utc).timestamp() for _, wall, _, ts in receiver.take()
    )


def pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def busy(before: dict[str, float], after: dict[str, float], seconds: float) -> str:
    """Where the CPU went during a run, in cores (this machine has os.cpu_count())."""
    used = {name: after.get(name, 0.0) - before.get(name, 0.0) for name in after}
    dispatchers = sum(v for k, v in used.items() if k.startswith("dispatcher"))
    top = [("dispatchers", dispatchers), *[(k, v) for k, v in used.items() if not k.startswith("dispatcher")]]
    top = sorted(top, key=lambda kv: -kv[1])[:4]
    return f"CPU {sum(used.values()) / seconds:.2f} cores: " + ", ".join(f"{k} {v / seconds:.2f}" for k, v in top)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000, help="events per throughput run")
    parser.add_argument("--slow-ms", type=float, default=100, help="response time of the slow receiver profile")
    parser.add_argument("--latency-events", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20, help="events/s through the gateway in the latency run")
    args = parser.parse_args()
    print(f"machine: {machine()}", flush=True)
    receiver = Receiver(0.0)
    env = {"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "WEBHOOK_CONCURRENCY": str(CONCURRENCY)}
    profiles = {"receiver answers at once": 0.0, f"receiver answers in {args.slow_ms:g} ms": args.slow_ms / 1000}
    rates: dict[tuple[str, int], tuple[float, str]] = {}
    latencies: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory() as logs, LocalStack(log_dir=Path(logs), extra_env={**NO_RATE_LIMITS, **env}) as platform:
        api = Api(platform.url)
        slugs = balanced_slugs(Settings.kafka_partitions, WORKSPACES // Settings.kafka_partitions)
        workspaces = [create_workspace(api, platform.admin_token, slug) for slug in slugs]
        for ws in workspaces:
            r = api.post(f"{ws.path}/webhooks", key=ws.key, json={"url": receiver.url, "events": ["changelog.published"]})
            assert r.status_code == 201, r.text
        platform.kill("webhooks-worker")  # this bench runs its own dispatchers
        platform.spawn("webhooks-relay", [FEEDBACK, "worker", "webhooks", "relay"])
        for count in (1, 2):
            dispatchers = start_dispatchers(platform, count)
            latency(api, workspaces, receiver, WORKSPACES, 4)  # warm-up: every dispatcher has joined the group
            time.sleep(8)  # let the group settle (a second member causes a rebalance)
            receiver.take()
            for profile, delay in profiles.items():
                receiver.delay = delay
                before, started = cpu_by_process(platform), time.monotonic()
                rate = throughput(platform, receiver, slugs, args.events)
                rates[profile, count] = (rate, busy(before, cpu_by_process(platform), time.monotonic() - started))
            receiver.delay = 0.0
            latencies[count] = latency(api, workspaces, receiver, args.latency_events, args.rate)
            for process in dispatchers:
                process.stop()
    print(f"\nwebhook delivery: {WORKSPACES} workspaces spread evenly over {Settings.kafka_partitions} partitions, "
          f"1 endpoint each; WEBHOOK_CONCURRENCY={CONCURRENCY}; SecantusDB + Tansu stand-ins")
    print(f"throughput ({args.events} events injected into Kafka per run; rate between the 10th and 90th percentile of arrivals)")
    for profile in profiles:
        one, two = rates[profile, 1][0], rates[profile, 2][0]
        print(f"  {profile}:")
        for count in (1, 2):
            rate, cpu = rates[profile, count]
            print(f"    {count} dispatcher{'s' if count > 1 else ' '}: {rate:7.1f} deliveries/s   ({cpu})")
        print(f"    ratio 2/1: {two / one:.2f}   (target >= 1.7)")
    print(f"latency, event written by the API -> delivered ({args.latency_events} changelogs at {args.rate:g}/s through the gateway)")
    for count, lat in latencies.items():
        print(f"    {count} dispatcher{'s' if count > 1 else ' '}: p50 {pct(lat, 50) * 1000:4.0f} ms   "
              f"p95 {pct(lat, 95) * 1000:4.0f} ms   max {lat[-1] * 1000:4.0f} ms   (target p95 < 500 ms)")


if __name__ == "__main__":
    main()
