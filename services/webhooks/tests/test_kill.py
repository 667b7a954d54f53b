"""The dispatcher SIGKILLed in the middle of 1,000 deliveries loses none of them.

Offsets are committed only after the deliveries are recorded, and a leased attempt of the
dead process is taken over when its lease runs out; the receiver may see an event twice,
but then only with the same webhook-id.
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

from testkit import wait_for
from .helpers import publish_changelog

EVENTS = 1000
WORKER = "webhooks-worker"


@pytest.mark.reliability
def test_sigkill_midway_loses_no_delivery(stack, api, hooks, receiver):
    route = receiver.route()
    hooks.create(route, events=["changelog.published"])
    with ThreadPoolExecutor(8) as pool:
        entries = pool.map(lambda n: publish_changelog(api, hooks.ws, n), range(EVENTS))
        wait_for(lambda: len(route.received) >= EVENTS // 4, timeout=90, what="a quarter of the deliveries")
        stack.kill(WORKER)
        killed_at = len(route.received)
        try:
            created = {e["id"] for e in entries}
        finally:
            stack.processes[WORKER].start()
    assert killed_at < EVENTS, "the dispatcher should be killed midway"

    def unique_events():
        return {r.json()["data"]["id"] for r in route.received}

    wait_for(lambda: len(unique_events()) >= EVENTS, timeout=120, interval=0.5, what=f"{EVENTS} deliveries")
    received = route.received
    assert unique_events() == created
    ids_per_event = defaultdict(set)
    for r in received:
        ids_per_event[r.json()["data"]["id"]].add(r.id)
    assert all(len(ids) == 1 for ids in ids_per_event.values()), "a duplicate came with another webhook-id"
    assert all(r.verified_with == route.secrets for r in received)
    print(f"\nkilled after {killed_at} deliveries; {len(received)} received for {EVENTS} events")
