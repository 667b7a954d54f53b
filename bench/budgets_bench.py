"""What the gateway's shared budgets cost a request: the same reads and writes through a gateway
counting every budget in the shared store (the platform's MongoDB) and through one with every
budget off, one request at a time, and the store's round trips per request.

    .venv/bin/python bench/budgets_bench.py [--requests 400]

Prints p50 and p95 latency per request of each gateway and the difference. The budgets are set
high enough never to refuse, so every request does the counting a real one does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devstack import LocalStack, _bin, _healthy, _wait, free_port  # noqa: E402
from testkit import Api, create_workspace  # noqa: E402
from harness import NO_RATE_LIMITS, machine  # noqa: E402

HIGH = "1000000/60"  # counted, never refusing


def timed(call, count: int) -> tuple[float, float]:
    latencies = []
    for _ in range(count):
        started = time.perf_counter()
        r = call()
        latencies.append((time.perf_counter() - started) * 1000)
        assert r.status_code < 300, r.text
    latencies.sort()
    return statistics.median(latencies), latencies[int(len(latencies) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    with LocalStack(extra_env=NO_RATE_LIMITS, log_dir=Path(tempfile.mkdtemp(prefix="budgets-bench-"))) as stack:
        port = free_port()
        env = {**stack.env(), **{name: HIGH for name in NO_RATE_LIMITS}}
        counted = stack.spawn("gateway-budgets", [_bin("feedback-gateway"), "--bind", f"127.0.0.1:{port}"], env=env)
        _wait(lambda: _healthy(port), "the counting gateway")
        off, on = Api(stack.url), Api(f"http://127.0.0.1:{port}")
        ws = create_workspace(off, stack.admin_token)
        ws.board("features", "Features")
        post = off.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "Bench", "content": "x"}).json()
        visitor = {"X-Feedback-Anonymous-Id": uuid.uuid4().hex}
        cases = {
            "GET /boards (anonymous: identity, address, workspace)": lambda api: api.get(f"{ws.path}/boards", headers=visitor),
            "GET /posts (anonymous)": lambda api: api.get(f"{ws.path}/posts", headers=visitor),
            "GET /posts (manager key: the key's budget)": lambda api: api.get(f"{ws.path}/posts", key=ws.key),
            "POST /vote (anonymous: identity, address)": lambda api: api.post(f"{ws.path}/posts/{post['id']}/vote", headers=visitor),
        }
        ws.settings(anonVote=True)
        print(f"machine: {machine()}; {args.requests} sequential requests per case and gateway")
        print(f"{'request':56} {'budgets off p50/p95':>20} {'counted p50/p95':>18} {'difference p50':>15}")
        for name, call in cases.items():
            for api in (off, on):  # warm both: connections, caches, the first counters
                timed(lambda: call(api), 20)
            base = timed(lambda: call(off), args.requests)
            spent = timed(lambda: call(on), args.requests)
            print(f"{name:56} {base[0]:9.2f} / {base[1]:6.2f} ms {spent[0]:7.2f} / {spent[1]:6.2f} ms {spent[0] - base[0]:+11.2f} ms")
        counted.stop()


if __name__ == "__main__":
    main()
