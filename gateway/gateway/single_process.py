"""``feedback-gateway --with-services``: the gateway and every WSGI service in one process.

``make run``'s layout (docs/architecture.md, "Two layouts"). One gunicorn worker serves the
gateway and every service whose API is a WSGI app, each on its own listener: a service keeps
its port and its URL (``SERVICE_URL_<NAME>``), and the calls between them stay HTTP calls,
signed and checked as in the chart's layout. Each service's background workers (outbox relay,
consumer, its own) run as threads of the same process on the service's own context, so what
a context loads once (the posts service's sentence model) is loaded once for the platform.

Only the packaging differs from the chart's layout, one Deployment per service: the same apps,
the same loops, the same database and Kafka traffic. A service whose API is an ASGI app (the
MCP server) keeps a process of its own.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Mapping
from urllib.parse import urlsplit

from common.config import Settings
from common.plugins import ServiceSpec

log = logging.getLogger(__name__)


def in_process(services: Mapping[str, ServiceSpec]) -> dict[str, ServiceSpec]:
    """The services this process can serve: those whose API is a WSGI app."""
    return {name: spec for name, spec in services.items() if not spec.asgi}


def service_binds(settings: Settings, services: Mapping[str, ServiceSpec]) -> dict[str, str]:
    """Each in-process service's ``HOST:PORT``, from its URL (the one its callers use)."""
    binds = {}
    for name in in_process(services):
        url = settings.service_url(name)
        if url is None:
            raise SystemExit(f"--with-services: SERVICE_URL_{name.upper()} is unset (where the {name} API listens)")
        parts = urlsplit(url)
        binds[name] = f"{parts.hostname}:{parts.port}"
    return binds


class ByListener:
    """A WSGI app that hands each request to the app of the listener it arrived on (gunicorn
    sets ``SERVER_PORT`` to the listening socket's port), the gateway's by default."""

    def __init__(self, apps: Mapping[str, Callable], default: Callable):
        self.apps = dict(apps)
        self.default = default

    def __call__(self, environ, start_response):
        return self.apps.get(environ.get("SERVER_PORT"), self.default)(environ, start_response)


def services_app(settings: Settings, services: Mapping[str, ServiceSpec], gateway: Callable) -> ByListener:
    """Build every in-process service's app and start its workers' loops in threads (called in
    the gunicorn worker, after fork, like any app factory; imported there, not in the master)."""
    from common.app import create_service_app
    from common.db import share_change_streams
    from common.workers import build_loops, supervise

    apps = {}
    stop = threading.Event()  # never set: the loops end with the process
    share_change_streams(settings)  # every service's idle loops here: one stream, not one each
    for name, bind in service_binds(settings, services).items():
        spec = services[name]
        context = spec.create_context(settings)
        apps[bind.rpartition(":")[2]] = create_service_app(settings, spec, context)
        for loop_name, loop in build_loops(settings, spec, context, spec.worker_names()).items():
            threading.Thread(target=supervise, args=(f"{name}.{loop_name}", loop, stop), name=f"{name}.{loop_name}",
                             daemon=True).start()
        log.info("%s served in this process with its workers: %s", name, ", ".join(spec.worker_names()) or "none")
    return ByListener(apps, gateway)
