"""Stopping on a signal without taking a lock in the signal handler."""

from __future__ import annotations

import signal
import time


class StopSignals:
    """Which of ``signals`` arrived. The handler only records it: a signal handler runs on the
    main thread between two bytecodes, so one that takes a lock (``Event.set`` does) deadlocks
    when the main thread holds that lock at that moment, inside ``Event.wait`` (seen here: a
    worker that got two SIGTERMs in a row never stopped). The main thread polls instead."""

    def __init__(self, *signals: int):
        self.received: list[int] = []
        for sig in signals:
            signal.signal(sig, lambda signum, _frame: self.received.append(signum))

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` (a signal cuts it short); whether one has arrived."""
        deadline = time.monotonic() + seconds
        while not self.received and time.monotonic() < deadline:
            time.sleep(min(0.1, seconds))
        return bool(self.received)
