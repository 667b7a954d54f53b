"""Run a service's background loops (outbox relay, consumer, its own workers) in threads."""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Callable

from common.config import Settings
from common.consumer import ConsumerRunner
from common.plugins import ServiceSpec, resolve
from common.relay import OutboxRelay
from common.signals import StopSignals

log = logging.getLogger(__name__)


def consumer_group(service: str) -> str:
    return f"feedback.{service}"


def build_loops(settings: Settings, spec: ServiceSpec, context, names: list[str]) -> dict[str, Callable]:
    unknown = set(names) - set(spec.worker_names())
    if unknown:
        raise SystemExit(f"service '{spec.name}' has no worker(s) {sorted(unknown)}; it has {spec.worker_names()}")
    loops: dict[str, Callable[[threading.Event], None]] = {}
    for name in names:
        if name == "relay":
            loops[name] = OutboxRelay(settings, context.store.db, spec.name).run
        elif name == "consumer":
            handlers = resolve(spec.consumers)(context)
            loops[name] = ConsumerRunner(settings, context.store.db, consumer_group(spec.name), handlers).run
        else:
            loops[name] = lambda stop, work=resolve(spec.workers[name]): work(context, stop)
    return loops


def supervise(name: str, loop: Callable[[threading.Event], None], stop: threading.Event) -> None:
    """Keep ``loop`` running until ``stop``; a crash is logged and the loop restarted."""
    while not stop.is_set():
        try:
            loop(stop)
        except Exception:  # noqa: BLE001 - a worker must outlive a bug in one iteration
            log.exception("worker %s crashed; restarting in 1s", name)
            stop.wait(1)


def run_workers(settings: Settings, spec: ServiceSpec, names: list[str] | None = None) -> None:
    """Run the named workers (all of the service's by default) until SIGTERM or SIGINT."""
    context = spec.create_context(settings)
    loops = build_loops(settings, spec, context, names or spec.worker_names())
    stop = threading.Event()
    signals = StopSignals(signal.SIGTERM, signal.SIGINT)
    threads = [
        threading.Thread(target=supervise, args=(f"{spec.name}.{n}", loop, stop), name=n, daemon=True)
        for n, loop in loops.items()
    ]
    for t in threads:
        t.start()
    log.info("%s workers running: %s", spec.name, ", ".join(loops))
    while not signals.wait(1):
        pass
    stop.set()
    # Each loop ends at its next step; one blocked in a database wait (a change stream's) would
    # hold the stop for the wait's length. Past GRACEFUL_SECONDS the process ends anyway: every
    # loop is written to survive a kill (offsets committed after the work, outbox rows marked
    # after the send), so what was cut short is done again by the next process.
    deadline = time.monotonic() + settings.graceful_seconds
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
