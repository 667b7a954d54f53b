"""Shared bench tooling: the machine's description, the wrk load generator, the ceiling app.

wrk (Debian's package) is the load generator: it runs as its own process and costs far
less CPU than a Python client, which matters on a 2-core machine.
"""

from __future__ import annotations

import atexit
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from testkit.fixtures import RATE_LIMIT_SETTINGS

HERE = Path(__file__).resolve().parent
# Benchmarks measure the platform's throughput, not its rate limits (tests/test_budgets.py does).
NO_RATE_LIMITS = {name: "0/60" for name in RATE_LIMIT_SETTINGS}


def machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cpu = platform.processor() or platform.machine()
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def ensure_wrk() -> str:
    path = shutil.which("wrk")
    if path:
        return path
    print("installing wrk (Debian package) ...", flush=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=False, stdout=subprocess.DEVNULL)
    if not shutil.which("wrk"):
        subprocess.run(["apt-get", "update", "-qq"], check=False, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, stdout=subprocess.DEVNULL)
    return shutil.which("wrk")


@dataclass
class Load:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int

    def __str__(self) -> str:
        return f"{self.rps:8.0f} req/s  p50 {self.p50_ms:6.2f} ms  p99 {self.p99_ms:6.2f} ms  non-2xx/errors {self.errors}"


LUA_TEMPLATE = """
wrk.method = "{method}"
wrk.body = {body}
{headers}
"""

# Each request takes the next header set (e.g. another voter), cycling.
LUA_ROTATE = """
local sets = {{ {sets} }}
local i = 0
request = function()
  i = i + 1
  return wrk.format(nil, nil, sets[(i % #sets) + 1], nil)
end
"""


def _lua_table(headers: dict) -> str:
    return "{" + ", ".join(f'["{k}"] = [[{v}]]' for k, v in headers.items()) + "}"


def wrk(url: str, *, seconds: int = 8, connections: int = 16, threads: int = 1, method: str = "GET",
        headers: dict | None = None, body: str | None = None, rotating: list[dict] | None = None) -> Load:
    """Run wrk against ``url`` and parse its throughput and latency percentiles.

    ``rotating``: header sets merged over ``headers``, one per request in turn.
    """
    lines = [f'wrk.headers["{k}"] = [[{v}]]' for k, v in (headers or {}).items()]
    script = LUA_TEMPLATE.format(method=method, body=f"[[{body}]]" if body else "nil", headers="\n".join(lines))
    if rotating:
        script += LUA_ROTATE.format(sets=", ".join(_lua_table({**(headers or {}), **h}) for h in rotating))
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    out = subprocess.run(
        [ensure_wrk(), f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", f.name, url],
        capture_output=True, text=True, check=True,
    ).stdout
    os.unlink(f.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses:\s+(\d+)", out))
    return Load(rps, _percentile(out, "50%"), _percentile(out, "99%"), errors)


def _percentile(out: str, label: str) -> float:
    m = re.search(rf"^\s+{re.escape(label)}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def process_tree(pid: int) -> list[int]:
    """A process and all its descendants (a gunicorn master and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def rss_mb(pid: int) -> float:
    """Resident memory of a process tree."""
    total = 0
    for p in process_tree(pid):
        try:
            total += next(int(line.split()[1]) for line in open(f"/proc/{p}/status") if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process tree has used so far."""
    total = 0
    for p in process_tree(pid):
        try:
            fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime in clock ticks
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def wait_up(url: str, timeout: float = 10.0) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).ok:
                return
        except (requests.ConnectionError, requests.Timeout):  # a starting process may accept and not answer yet
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def wait_ready(url: str, in_a_row: int = 1, timeout: float = 600.0) -> None:
    """Until ``url`` (a ``/readyz``) answers 200 ``in_a_row`` times running: a probe reaches one
    gunicorn worker, so several answers in a row stand for all of a process's workers."""
    import urllib3

    deadline, seen = time.monotonic() + timeout, 0
    while seen < in_a_row:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not turn ready")
        try:
            ready = urllib3.request("GET", url, timeout=5, retries=False).status == 200
        except urllib3.exceptions.HTTPError:
            ready = False  # accepted, not answering yet
        seen = seen + 1 if ready else 0
        time.sleep(0.05 if ready else 0.2)


def start_ceiling(port: int) -> subprocess.Popen:
    """The trivial Falcon JSON endpoint under the platform's own gunicorn settings."""
    process = subprocess.Popen([sys.executable, str(HERE / "ceiling.py"), "--bind", f"127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    atexit.register(process.terminate)  # also when the bench dies half-way
    return process


STATUSES = ["open", "under-review", "planned", "in-progress", "complete"]


def api_caller(base_url: str, http):
    """``call(method, path, body=None, key=None)``: one /v1 call, its decoded answer (a 2xx)."""
    import json

    def call(method, path, body=None, key=None):
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
        for pause in (1, 2, 4, 8, None):  # a 503 (a stand-in that stalled under load) says to try again
            r = http.request(method, base_url + "/v1" + path, body=json.dumps(body) if body is not None else None,
                             headers=headers, timeout=120)
            if r.status != 503 or pause is None:
                break
            time.sleep(pause)
        assert r.status < 300, (path, r.status, r.data[:300])
        return json.loads(r.data or b"null")

    return call


def insert_posts(db, slug: str, board_ids: list[str], seeds: list[tuple[str, str]], stored_vectors: dict[str, bytes], rng,
                 batch_size: int = 2000, triage=None) -> None:
    """Write generated posts (``(title, content)``) straight into the posts database with the
    service's own document builder, oldest first, a second apart, with random statuses, votes
    and comment counts, and their titles' stored vectors, as if embedded when written. With
    ``triage`` (the workspace's saved ``posts.triage.Settings``, with a number field ``impact``
    and a tag ``bug``): an impact of 1-3 and every fourth post tagged, with the score and facets
    the service would compute."""
    from datetime import timedelta

    from common import auth
    from common.ids import now
    from posts import embeddings
    from posts.service import new_post

    manager = auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="bench")
    t0, batch = now(), []
    for i, (title, content) in enumerate(seeds):
        stored = {"embedding": stored_vectors[title], "embeddingModel": embeddings.MODEL}
        doc = new_post(slug, rng.choice(board_ids), title, content, rng.choice(STATUSES), manager, **stored)
        doc["createdAt"] = doc["updatedAt"] = t0 - timedelta(seconds=len(seeds) - i)
        doc["voteCount"], doc["commentCount"] = rng.randint(0, 200), rng.randint(0, 30)
        # A third of the posts with customers behind them (not drawn from rng: the rest of the
        # generated board stays what earlier figures measured).
        doc["revenueCents"] = (i * 7919) % 5_000_000 if i % 3 == 0 else 0
        if triage is not None:
            doc["fields"], doc["tags"] = {"impact": 1 + i % 3}, ["bug"] if i % 4 == 0 else []
            doc.update(triage.derived(doc))
        batch.append(doc)
        if len(batch) == batch_size:
            db.posts.insert_many(batch)
            batch = []
    if batch:
        db.posts.insert_many(batch)

