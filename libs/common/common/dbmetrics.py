"""Count MongoDB round trips per HTTP request (pymongo command monitoring).

Every command a request's thread sends is counted; the service answers the count in the
``X-Db-Round-Trips`` header, which the gateway does not forward to the public. Benchmarks
and tests read it from the services directly to hold each endpoint to its budget.
"""

from __future__ import annotations

import threading

from prometheus_client import Counter
from pymongo import monitoring

ROUND_TRIPS_HEADER = "X-Db-Round-Trips"
COMMANDS = Counter("feedback_db_commands_total", "MongoDB commands sent", ["command"])

_local = threading.local()


class CommandCounter(monitoring.CommandListener):
    """Listeners run synchronously in the thread that sends the command."""

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        COMMANDS.labels(event.command_name).inc()
        if getattr(_local, "counting", False):
            _local.count += 1

    def succeeded(self, event) -> None:
        pass

    def failed(self, event) -> None:
        pass


LISTENER = CommandCounter()


def start_request() -> None:
    _local.counting, _local.count = True, 0


def finish_request() -> int:
    _local.counting = False
    return getattr(_local, "count", 0)


class RoundTrips:
    """Falcon middleware: count this request's database commands into a response header."""

    def process_request(self, req, resp):
        start_request()

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header(ROUND_TRIPS_HEADER, str(finish_request()))
