"""Background loops that outlive the outages of what they talk to (Kafka, MongoDB).

The outbox relay, the consumer runner and the webhook sender each repeat one step until their
``stop`` event is set. A step that fails on a connection-type error is tried again after a
wait that starts at FIRST_WAIT seconds and doubles up to LONGEST_WAIT (a step that succeeds
starts the schedule over), so a broker that is down is not hammered and one that is back is
found within seconds. Waits are ``stop.wait``: stopping ends a wait at once.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

import tenacity

FIRST_WAIT = 0.5  # seconds after the first failure in a row
LONGEST_WAIT = 10.0  # seconds: the cap of the doubling


def run_until_stopped(
    step: Callable[[], object],
    stop: threading.Event,
    *,
    errors: tuple[type[BaseException], ...],
    what: str,
    log: logging.Logger,
    on_failure: Callable[[], None] | None = None,
) -> None:
    """Call ``step()`` until ``stop`` is set, waiting with backoff after each failure among
    ``errors`` (logged as a warning on ``log``, named ``what``; then ``on_failure()``, e.g. to
    drop a broken client). Any other exception ends the loop and propagates."""

    def before_wait(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception()
        log.warning("%s: %s; retrying in %.1fs", what, error, state.upcoming_sleep)
        if on_failure is not None:
            on_failure()

    # One call of ``retrying`` runs the step until it succeeds once, so a success restarts
    # the schedule at FIRST_WAIT.
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(errors),
        wait=tenacity.wait_exponential(multiplier=FIRST_WAIT, max=LONGEST_WAIT),
        sleep=stop.wait,
        before_sleep=before_wait,
        reraise=True,
    )

    def attempt() -> None:
        if not stop.is_set():  # a wait that stopping cut short is not followed by a step
            step()

    while not stop.is_set():
        retrying(attempt)
