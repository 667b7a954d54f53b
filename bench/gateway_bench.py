"""GET /branding directly from the workspaces service and through the gateway, beside the ceiling.

Prints req/s and latency for each, and the gateway/direct ratio. Run: `make bench` or
`.venv/bin/python bench/gateway_bench.py [--seconds N]`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import requests  # noqa: E402

from common import auth  # noqa: E402
from common.devstack import LocalStack, free_port  # noqa: E402
from common.testing import Api, create_workspace  # noqa: E402
from harness import machine, start_ceiling, wait_up, wrk  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    ceiling_port = free_port()
    ceiling = start_ceiling(ceiling_port)
    with tempfile.TemporaryDirectory() as logs, LocalStack(log_dir=Path(logs)) as platform:
        api = Api(platform.url)
        ws = create_workspace(api, platform.admin_token)
        path = f"/v1/workspaces/{ws.slug}/branding"
        # The services accept only signed calls: sign the (anonymous) direct call the way the gateway would.
        direct_headers = auth.signed_headers(platform.internal_secret, "GET", path, auth.Caller())
        direct_url = platform.service_url("workspaces") + path
        assert requests.get(direct_url, headers=direct_headers, timeout=5).status_code == 200
        wait_up(f"http://127.0.0.1:{ceiling_port}/hello")
        run = dict(seconds=args.seconds, connections=args.connections)
        wrk(platform.url + path, seconds=2, connections=args.connections)  # warm-up
        ceiling_load = wrk(f"http://127.0.0.1:{ceiling_port}/hello", **run)
        direct = wrk(direct_url, headers=direct_headers, **run)
        through = wrk(platform.url + path, **run)
    ceiling.terminate()
    print(f"GET /branding ({args.connections} connections, {args.seconds}s each, wrk)")
    print(f"  ceiling (trivial Falcon) {ceiling_load}")
    print(f"  workspaces directly      {direct}")
    print(f"  through the gateway      {through}")
    print(f"  gateway/direct ratio     {through.rps / direct.rps:.2f}   (target >= 0.9)")
    print(f"  direct/ceiling ratio     {direct.rps / ceiling_load.rps:.2f}")


if __name__ == "__main__":
    main()
