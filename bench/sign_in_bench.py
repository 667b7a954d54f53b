"""Email-link sign-in end to end on ``make run``'s layout: request → message in the Maildir →
link redeemed → signed in (``GET /v1/me`` answers as the person).

    .venv/bin/python bench/sign_in_bench.py [--count 40]

Starts the platform as ``make run`` does (the lean "single" layout, mail kept in a Maildir by a
local SMTP server), creates a workspace, and signs in ``--count`` new addresses one after the
other, timing each whole round; prints p50, p95 and the slowest. The write limits are raised for
the run (one client signs in many people); everything else is the default install's.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import requests
from harness import machine, wait_ready

from testkit.mail import link_in, wait_for_mail


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args()
    from devstack import LocalStack

    folder = Path(tempfile.mkdtemp(prefix="sign-in-bench-"))
    (folder / "logs").mkdir()
    stack = LocalStack(layout="single", log_dir=folder / "logs", mail_dir=folder / "mail",
                       extra_env={"RATE_LIMIT_WRITES": "100000/60", "RATE_LIMIT_WRITES_PER_ADDRESS": "100000/60"})
    stack.start()
    try:
        wait_ready(f"{stack.url}/readyz")
        http = requests.Session()
        base = f"{stack.url}/v1"
        slug = f"bench-{uuid.uuid4().hex[:8]}"
        r = http.post(f"{base}/workspaces", json={"slug": slug, "name": "Bench"},
                      headers={"Authorization": f"Bearer {stack.admin_token}"})
        r.raise_for_status()
        rounds = []
        for i in range(args.count):
            email = f"person-{i}-{uuid.uuid4().hex[:6]}@example.com"
            started = time.perf_counter()
            http.post(f"{base}/workspaces/{slug}/sign-in/email", json={"email": email}).raise_for_status()
            link = link_in(wait_for_mail(stack.mail_dir, to=email, timeout=60), "http")
            token = parse_qs(urlsplit(link).query)["token"][0]
            session = http.post(f"{base}/workspaces/{slug}/sign-in/email/redeem", json={"token": token})
            session.raise_for_status()
            me = http.get(f"{base}/me", headers={"Authorization": f"Bearer {session.json()['token']}"})
            assert me.status_code == 200 and me.json()["email"] == email, me.text
            rounds.append((time.perf_counter() - started) * 1000)
        rounds.sort()
        p95 = rounds[min(len(rounds) - 1, int(round(0.95 * len(rounds))) - 1)]
        print(f"{machine()}\nemail-link sign-in end to end, {len(rounds)} people, make run's layout:")
        print(f"  p50 {statistics.median(rounds):.0f} ms   p95 {p95:.0f} ms   slowest {rounds[-1]:.0f} ms")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
