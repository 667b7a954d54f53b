"""The plugin contract. Every service is a plugin; the gateway and tools discover them.

A service package declares an entry point in the ``feedback.plugins`` group that names
a module implementing :func:`register_service`. That one hook returns a
:class:`ServiceSpec`: everything the platform needs to serve, route to, wire and run the
service. Nothing lists the services by hand.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pluggy

from common.config import Settings

PROJECT = "feedback"
ENTRY_POINT_GROUP = "feedback.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Worker = Callable[[Any, threading.Event], None]  # (context, stop) -> None


@dataclass(frozen=True)
class ServiceSpec:
    """What one service is and does.

    - ``routes``: ``(uri_template, resource_class)`` relative to ``/v1``; a resource class
      is built as ``resource_class(context)`` and serves the methods it has ``on_*`` for.
    - ``create_context(settings)``: builds the object every resource, handler and worker
      receives (store, outbox, service layer).
    - ``publishes``: Kafka topics this service owns and writes (via its outbox).
    - ``consumers(context)``: ``{topic: handler(event)}`` for its consumer group.
    - ``models``: mongoengine Documents whose indexes ``feedback init`` creates.
    - ``workers``: extra background loops by name, each ``worker(context, stop_event)``.
    - ``openapi``: path of this service's OpenAPI fragment (paths and schemas).
    - ``identity_path``: internal path that authenticates credentials (one service has it).
    - ``host_resolver_path``: internal path that maps a custom domain to its workspace:
      ``GET <path>?host=<host>`` answers ``{"slug": ...}`` or 404 (one service has it).
    """

    name: str
    routes: Sequence[tuple[str, type]]
    create_context: Callable[[Settings], Any]
    publishes: Sequence[str] = ()
    consumers: Callable[[Any], Mapping[str, Callable[[dict], None]]] | None = None
    models: Sequence[type] = ()
    workers: Mapping[str, Worker] = field(default_factory=dict)
    openapi: Path | None = None
    identity_path: str | None = None
    host_resolver_path: str | None = None
    internal_routes: Sequence[tuple[str, type]] = ()

    def worker_names(self) -> list[str]:
        names = ["relay"] if self.publishes else []
        if self.consumers is not None:
            names.append("consumer")
        return names + list(self.workers)


@hookspec
def register_service() -> ServiceSpec:
    """Return this plugin's ServiceSpec."""


def make_plugin_manager(load_entry_points: bool = True, plugins: Sequence[object] = ()) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(sys.modules[__name__])
    for plugin in plugins:
        pm.register(plugin)
    if load_entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def load_services(pm: pluggy.PluginManager | None = None) -> dict[str, ServiceSpec]:
    """Return every discovered service by name (sorted, so routing is deterministic)."""
    pm = pm or make_plugin_manager()
    specs = pm.hook.register_service()
    names = [s.name for s in specs]
    if len(names) != len(set(names)):
        raise RuntimeError(f"two plugins share a service name: {sorted(names)}")
    return {s.name: s for s in sorted(specs, key=lambda s: s.name)}
