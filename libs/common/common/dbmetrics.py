"""Count MongoDB round trips per HTTP request (pymongo command monitoring).

Every command a request's thread sends is counted and timed; the service answers both in
``X-Db-Round-Trips`` and ``X-Db-Time-Ms`` headers, which the gateway does not forward. Benchmarks
and tests read it from the services directly to hold each endpoint to its budget.
"""

from __future__ import annotations

import threading

from prometheus_client import Counter
from pymongo import monitoring

ROUND_TRIPS_HEADER = "X-Db-Round-Trips"
COMMANDS_HEADER = "X-Db-Commands"  # their names in order (e.g. "find,find"): says which trip is extra
DB_TIME_HEADER = "X-Db-Time-Ms"  # time spent waiting on MongoDB in this request (driver-measured)
COMMANDS = Counter("feedback_db_commands_total", "MongoDB commands sent", ["command"])

_local = threading.local()


class CommandCounter(monitoring.CommandListener):
    """Listeners run synchronously in the thread that sends the command."""

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        COMMANDS.labels(event.command_name).inc()
        if getattr(_local, "counting", False):
            target = event.command.get(event.command_name)  # the collection, for most commands
            _local.commands.append(f"{event.command_name}.{target}" if isinstance(target, str) else event.command_name)

    def succeeded(self, event) -> None:
        self._timed(event)

    def failed(self, event) -> None:
        self._timed(event)

    @staticmethod
    def _timed(event) -> None:
        if getattr(_local, "counting", False):
            _local.micros += event.duration_micros


LISTENER = CommandCounter()


def start_request() -> None:
    _local.counting, _local.commands, _local.micros = True, [], 0


def finish_request() -> tuple[list[str], float]:
    """This request's round trips (each ``command.collection``) and the milliseconds spent in them."""
    _local.counting = False
    return getattr(_local, "commands", []), getattr(_local, "micros", 0) / 1000


class RoundTrips:
    """Falcon middleware: count this request's database commands into a response header."""

    def process_request(self, req, resp):
        start_request()

    def process_response(self, req, resp, resource, req_succeeded):
        commands, millis = finish_request()
        resp.set_header(ROUND_TRIPS_HEADER, str(len(commands)))
        resp.set_header(COMMANDS_HEADER, ",".join(commands))
        resp.set_header(DB_TIME_HEADER, f"{millis:.3f}")
