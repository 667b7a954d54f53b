"""The local MongoDB stand-in's write rate as writes accumulate, with and without retryable
writes: why the local stack's MONGODB_URI says ``retryWrites=false`` (libs/devstack/devstack/__init__.py).

    .venv/bin/python bench/standin_bench.py [--writes 16000]

Starts the stand-in the way the local stack does (in memory) and inserts small documents one at
a time from one client, printing the rate for each quarter of the writes, first with pymongo's
default (retryable writes on, as on real MongoDB), then with them off.
"""

from __future__ import annotations

import argparse
import time

from pymongo import MongoClient

from devstack import LocalStack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=16000, help="writes for each setting (default 16000)")
    args = parser.parse_args()
    stack = LocalStack()
    stack.start_mongo()
    base = stack.mongodb_uri.split("&retryWrites=")[0]
    try:
        for retry in ("true", "false"):
            client = MongoClient(f"{base}&retryWrites={retry}")
            collection = client["standin_bench"][f"retry_{retry}"]
            quarter = args.writes // 4
            for part in range(4):
                started = time.perf_counter()
                for n in range(quarter):
                    collection.insert_one({"n": n, "part": part})
                rate = quarter / (time.perf_counter() - started)
                print(f"retryWrites={retry}: writes {part * quarter:>6,}-{(part + 1) * quarter:>6,}: {rate:6,.0f}/s", flush=True)
            client.close()
    finally:
        stack.stop_mongo()


if __name__ == "__main__":
    main()
