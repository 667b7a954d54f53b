"""Two dispatcher processes share the work without sending any attempt twice."""

from __future__ import annotations

import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from testkit import create_workspace, wait_for
from .helpers import Hooks, publish_changelog

EVENTS = 200
FEEDBACK = str(Path(sys.executable).with_name("feedback"))  # the console script beside this interpreter


@pytest.mark.reliability
def test_two_dispatchers_send_each_attempt_once(stack, api, admin_token, receiver):
    second = stack.spawn("webhooks-dispatcher-2", [FEEDBACK, "worker", "webhooks", "dispatcher"])
    try:
        route = receiver.route()
        route.fail_first_attempt = True  # so every delivery is also retried through the due-time records
        workspaces = [create_workspace(api, admin_token) for _ in range(4)]
        for ws in workspaces:
            Hooks(api, ws).create(route, events=["changelog.published"])
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: publish_changelog(api, workspaces[n % 4], n), range(EVENTS)))

        wait_for(lambda: len(route.received) >= 2 * EVENTS, timeout=120, interval=0.5, what="every first attempt and retry")
        per_id = Counter(r.id for r in route.received)
        assert len(per_id) == EVENTS
        assert set(per_id.values()) == {2}, f"attempts sent more than once: {[i for i, n in per_id.items() if n > 2][:5]}"
        assert all(len(r.verified_with) == 1 for r in route.received)  # each by its own endpoint's secret
    finally:
        second.stop()
        stack.processes.pop("webhooks-dispatcher-2", None)
