"""The sender: attempts deliveries with a pool of threads and records every outcome.

Work arrives two ways: the recorder hands over the deliveries it has just stored, already
leased to this process (no extra query), and the loop claims due ones from MongoDB while
workers are idle (retries, test pings, resends, the leases of a dead dispatcher).
WEBHOOK_CONCURRENCY threads attempt deliveries; outcomes are written back in bulk, and what
they mean for their endpoints (a failing span, disabling) is the service's to decide.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from pymongo.errors import PyMongoError

from common.ids import now
from common.retry import run_until_stopped
from webhooks import contract
from webhooks.delivery_client import Response
from webhooks.schedule import next_delay
from webhooks.signing import active_keys, body_bytes, signed_headers

log = logging.getLogger(__name__)

LINGER = 0.02  # seconds: outcomes that end close together are written in one bulk write
ROUND_SECONDS = 1.0  # expected time for one round of WEBHOOK_CONCURRENCY attempts (lease estimate)
LEASE_MARGIN = 5.0  # seconds of lease left after the longest attempt
BUSY_ENDPOINT_DELAY = 1.0  # seconds before a delivery to an endpoint at its limit is due again
# An idle dispatcher (nothing due) sleeps until the earliest pending delivery is due, this long
# at most: a delivery another dispatcher records and then abandons is due when its lease ends,
# which this process learns by looking again.
IDLE_MAX_SECONDS = 5.0


@dataclass
class Outcome:
    delivery: dict
    endpoint: dict
    response: Response
    at: object  # datetime the answer (or failure) came


class Sender:
    def __init__(self, context):
        self.settings = context.config
        self.repo = context.repo
        self.service = context.service
        self.client = context.client
        self.token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.capacity = self.settings.concurrency
        self.queue: queue.Queue = queue.Queue()  # (delivery, endpoint) leased to this process
        self.results: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        self.wake = threading.Event()  # an attempt ended
        self._busy = 0
        self._in_flight: dict = {}  # endpoint id -> attempts under way
        self._deferred: queue.SimpleQueue = queue.SimpleQueue()  # delivery ids whose endpoint was busy
        self._more_due = False
        self._next_poll = 0.0  # monotonic time of the next look for due deliveries
        self._lock = threading.Lock()
        self._workers = [
            threading.Thread(target=self._work, name=f"webhook-send-{i}", daemon=True) for i in range(self.capacity)
        ]
        for worker in self._workers:
            worker.start()

    # -- local work ------------------------------------------------------------------------

    def backlog(self) -> int:
        """Deliveries leased to this process and not finished: queued or being attempted."""
        with self._lock:
            return self.queue.qsize() + self._busy

    def lease_for(self, position: int) -> float:
        """A lease for a delivery queued behind ``position`` others: the base lease plus
        ROUND_SECONDS per round of attempts ahead. Rounds slower than that are covered by
        renewing the lease just before the attempt (see ``_holds_lease``)."""
        return self.settings.lease + (position // self.capacity) * ROUND_SECONDS

    def enqueue(self, delivery: dict, endpoint: dict) -> None:
        self.queue.put((delivery, endpoint))

    def wait_below(self, limit: int, stop: threading.Event) -> None:
        """Block until at most ``limit`` deliveries are queued or under way (backpressure)."""
        while self.backlog() > limit and not stop.is_set():
            self.wake.wait(0.05)

    def _work(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            delivery, endpoint = item
            with self._lock:
                if self._in_flight.get(endpoint["_id"], 0) >= self.settings.endpoint_concurrency:
                    self._deferred.put(delivery["_id"])  # given back by the loop, due again soon
                    continue
                self._in_flight[endpoint["_id"]] = self._in_flight.get(endpoint["_id"], 0) + 1
                self._busy += 1
            try:
                self._attempt(delivery, endpoint)
            finally:
                with self._lock:
                    self._busy -= 1
                    left = self._in_flight.pop(endpoint["_id"]) - 1
                    if left:
                        self._in_flight[endpoint["_id"]] = left
                self.wake.set()

    # -- the loop ------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Write outcomes, claim due deliveries while workers are idle, sleep until woken.

        Due deliveries are looked for every WEBHOOK_POLL_SECONDS while some are, at once while
        the last claim came back full, and when none was due, again when the earliest pending one
        is (IDLE_MAX_SECONDS at most: an idle dispatcher asks the database little); deliveries
        this process records are handed to it directly and wake it. Attempts that end wake the
        loop, which waits LINGER to write their outcomes together.
        """
        # Leased deliveries whose outcomes are not written are attempted again after the
        # lease: at-least-once, with the same webhook-id.
        run_until_stopped(lambda: self._round(stop), stop, errors=(PyMongoError,), what="webhook sender: database error", log=log)

    def _round(self, stop: threading.Event) -> None:
        """One round of the loop: write outcomes, claim if due, then sleep until woken."""
        if self.flush():  # a retry or a deferred delivery may be due before the idle wait ends
            self._next_poll = min(self._next_poll, time.monotonic() + self.settings.poll_seconds)
        idle = self.capacity - self.backlog()
        if idle > 0 and (self._more_due or time.monotonic() >= self._next_poll):
            claimed = self.claim(idle)
            self._more_due = claimed == idle  # a full claim: more may be due
            self._next_poll = time.monotonic() + (self.settings.poll_seconds if claimed else self._idle_wait())
        timeout = self.settings.poll_seconds if self._more_due else max(0.0, self._next_poll - time.monotonic())
        if self.wake.wait(timeout):
            self.wake.clear()
            stop.wait(LINGER)

    def _idle_wait(self) -> float:
        """Seconds until the earliest pending delivery is due, between WEBHOOK_POLL_SECONDS and
        IDLE_MAX_SECONDS."""
        due = self.repo.next_due()
        until = IDLE_MAX_SECONDS if due is None else (due - now()).total_seconds()
        return min(IDLE_MAX_SECONDS, max(self.settings.poll_seconds, until))

    def close(self) -> None:
        """Give back what is queued, finish the attempts under way and record them.
        Call once nothing enqueues any more."""
        unstarted = []
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                unstarted.append(item[0]["_id"])
        for _ in self._workers:
            self.queue.put(None)
        for worker in self._workers:
            worker.join(timeout=self.settings.timeout + 5)
        try:
            self.repo.release(unstarted, self.token)  # due now again, for any dispatcher
            self.flush()
        except PyMongoError as ex:
            log.warning("webhook sender: could not record the last outcomes (%s); they will be retried", ex)
        self.client.close()

    def claim(self, limit: int) -> int:
        """Claim up to ``limit`` due deliveries and queue them; return how many were claimed."""
        deliveries = self.repo.claim_due(limit, self.token, self.settings.lease)
        if not deliveries:
            return 0
        endpoints = self.repo.endpoints_by_id([d["endpointId"] for d in deliveries])
        cancelled = []
        for d in deliveries:
            endpoint = endpoints.get(d["endpointId"])
            if endpoint is None or endpoint.get("disabled"):
                cancelled.append(d)
            else:
                self.enqueue(d, endpoint)
        self.repo.apply([self.repo.cancellation(d["_id"], self.token) for d in cancelled])
        return len(deliveries)

    def _holds_lease(self, delivery: dict) -> bool:
        """Whether the lease still covers a whole attempt; renew it if it does not. False when
        it ran out and another dispatcher took the delivery over (it then sends it)."""
        expires = delivery["nextAttemptAt"]
        if (expires - now()).total_seconds() >= self.settings.timeout + LEASE_MARGIN:
            return True
        try:
            return self.repo.renew(delivery["_id"], self.token, self.settings.lease)
        except PyMongoError as ex:
            log.warning("webhook sender: cannot renew the lease of %s (%s); it is retried later", delivery["_id"], ex)
            return False

    def _attempt(self, delivery: dict, endpoint: dict) -> None:
        try:
            if not self._holds_lease(delivery):
                return
            sent_at = now()
            body = body_bytes(delivery["payload"])
            headers = signed_headers(delivery["messageId"], sent_at, body, active_keys(endpoint, sent_at))
            response = self.client.post(endpoint["url"], body, headers)
        except Exception as ex:  # noqa: BLE001 - a bug in one attempt is a failed attempt, not a dead thread
            log.exception("webhook sender: attempt of %s failed unexpectedly", delivery["_id"])
            response = Response(None, f"internal error: {ex.__class__.__name__}", 0)
        self.results.put(Outcome(delivery, endpoint, response, now()))

    # -- outcomes ------------------------------------------------------------------------

    def flush(self) -> bool:
        """Write what ended (outcomes) and what waits for a busy endpoint; whether anything was
        written (a retry or a deferred delivery may then be due soon)."""
        deferred = []
        while True:
            try:
                deferred.append(self._deferred.get_nowait())
            except queue.Empty:
                break
        try:
            self.repo.defer(deferred, self.token, BUSY_ENDPOINT_DELAY)
        except PyMongoError:
            for delivery_id in deferred:
                self._deferred.put(delivery_id)
            raise
        outcomes: list[Outcome] = []
        while True:
            try:
                outcomes.append(self.results.get_nowait())
            except queue.Empty:
                break
        if not outcomes:
            return bool(deferred)
        try:
            self.repo.apply([self._record(o) for o in outcomes])
        except PyMongoError:
            for o in outcomes:
                self.results.put(o)  # try again next round, while the lease still holds
            raise
        self._endpoint_effects(outcomes)
        return True

    def _record(self, o: Outcome):
        """The write of one outcome: succeeded, failed (410, or the schedule used up), or
        pending until the next attempt of the schedule."""
        d, r = o.delivery, o.response
        attempt = {"at": o.at, "statusCode": r.status, "error": r.error, "durationMs": r.duration_ms}
        state: dict = {"lastAttemptAt": o.at}
        if r.ok:
            state.update(status=contract.SUCCEEDED, nextAttemptAt=None)
        elif r.status == 410:
            state.update(status=contract.FAILED, nextAttemptAt=None)
        else:
            failures = d.get("attemptCount", 0) + 1 - d.get("scheduleStart", 0)
            delay = next_delay(failures, self.settings.retry_scale, r.retry_after)
            if delay is None:
                state.update(status=contract.FAILED, nextAttemptAt=None)
            else:
                state.update(status=contract.PENDING, nextAttemptAt=o.at + timedelta(seconds=delay))
        return self.repo.outcome(d["_id"], self.token, state, attempt)

    def _endpoint_effects(self, outcomes: list[Outcome]) -> None:
        """Once per endpoint and batch, the service hears of the newest outcome (and of any 410)."""
        by_endpoint: dict = {}
        for o in outcomes:
            by_endpoint.setdefault(o.endpoint["_id"], []).append(o)
        for group in by_endpoint.values():
            newest = group[-1]
            gone = any(o.response.status == 410 for o in group)
            self.service.attempts_ended(newest.endpoint, gone, newest.response.ok, newest.at)
