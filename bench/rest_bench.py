"""The platform at rest: each process's resident memory and idle CPU, in both layouts.

    .venv/bin/python bench/rest_bench.py [--settle 30] [--seconds 30]

Starts the platform on an empty database in ``make run``'s lean layout ("single": the gateway,
every WSGI service and their workers in one process; the MCP server in another) and in the
chart's layout the suite uses ("processes": a gunicorn master and two workers per API, a
process per service's workers), lets each settle (the sentence model loads, warm-ups end),
then prints per process: RSS, and the CPU it used over ``--seconds`` while nothing was asked of
it; and the totals (RSS summed as ``ps`` shows it, so pages a master shares with its workers
count in each).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from harness import machine, process_tree


def own_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def own_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def command(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline") as f:
        words = f.read().split("\0")
    return " ".join(Path(w).name if i < 2 else w for i, w in enumerate(words) if w)[:70]


def at_rest(layout: str, settle: float, seconds: float) -> None:
    from devstack import LocalStack

    stack = LocalStack(layout=layout, log_dir=Path(tempfile.mkdtemp(prefix=f"rest-{layout}-")))
    stack.start()
    try:
        time.sleep(settle)
        pids = [p for process in stack.processes.values() for p in process_tree(process.popen.pid)]
        before = {p: own_cpu_seconds(p) for p in pids}
        started = time.perf_counter()
        time.sleep(seconds)
        elapsed = time.perf_counter() - started
        rows = []
        for p in pids:
            try:
                rows.append((own_rss_mb(p), (own_cpu_seconds(p) - before[p]) / elapsed, command(p)))
            except OSError:
                pass  # gone meanwhile
        print(f"\nlayout '{layout}' at rest, {len(rows)} processes:")
        for rss, cores, name in sorted(rows, reverse=True):
            print(f"  {rss:6.0f} MB  {cores:6.3f} cores  {name}")
        print(f"  total: {sum(r[0] for r in rows):.0f} MB RSS, {sum(r[1] for r in rows):.3f} cores")
    finally:
        stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--settle", type=float, default=30)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    for layout in ("single", "processes"):
        at_rest(layout, args.settle, args.seconds)


if __name__ == "__main__":
    main()
