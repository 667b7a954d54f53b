"""The background loops' retry schedule (common.retry): backoff that grows, restarts after a
success, and never outlasts a stop."""

import logging
import threading

import pytest

from common import retry
from common.retry import run_until_stopped

log = logging.getLogger("test-loop")


class RecordedWaits(threading.Event):
    """A stop event whose waits are noted and return at once: the schedule without the sleeping."""

    def __init__(self):
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        return self.is_set()


def scripted(stop: threading.Event, outcomes: str):
    """A step that fails ("x") or succeeds (".") in the order given, then sets ``stop``."""
    remaining = list(outcomes)

    def step():
        outcome = remaining.pop(0)
        if not remaining:
            stop.set()
        if outcome == "x":
            raise ConnectionError("broker down")

    return step


def test_waits_double_from_half_a_second_to_ten_and_start_over_after_a_success(caplog):
    stop = RecordedWaits()
    failures = []
    with caplog.at_level(logging.WARNING, logger=log.name):
        run_until_stopped(scripted(stop, "xxxxxxx.xx."), stop, errors=(ConnectionError,), what="test loop", log=log,
                          on_failure=lambda: failures.append(1))
    assert stop.waits == [0.5, 1, 2, 4, 8, 10, 10, 0.5, 1]
    assert len(failures) == 9, "on_failure after each failure"
    assert caplog.messages[0] == "test loop: broker down; retrying in 0.5s"
    assert caplog.messages[6] == "test loop: broker down; retrying in 10.0s"


def test_an_error_not_listed_ends_the_loop():
    stop = threading.Event()

    def step():
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        run_until_stopped(step, stop, errors=(ConnectionError,), what="test loop", log=log)


def test_a_stop_ends_a_wait_at_once_and_no_step_follows(monkeypatch):
    monkeypatch.setattr(retry, "FIRST_WAIT", 3600.0)  # a wait only a stop can end within the test
    stop, waiting = threading.Event(), threading.Event()
    steps = []

    def step():
        steps.append(1)
        raise ConnectionError("broker down")

    loop = threading.Thread(
        target=run_until_stopped, args=(step, stop),
        kwargs={"errors": (ConnectionError,), "what": "test loop", "log": log, "on_failure": waiting.set},
    )
    loop.start()
    assert waiting.wait(30), "the step failed and the loop is about to wait"
    stop.set()
    loop.join(30)
    assert not loop.is_alive(), "the hour-long wait ended with the stop"
    assert steps == [1]
