"""The plugin contract. Every service is a plugin; the gateway and tools discover them.

A service package declares an entry point in the ``feedback.plugins`` group that names
its ``plugin`` module, which implements :func:`register_service`. That one hook returns a
:class:`ServiceSpec`: what the platform needs to route to, wire, initialise and run the
service, as data. Code is named by dotted reference (``"posts.resources:PostItem"``) and
imported only by the process that runs it, so the gateway, ``feedback init`` and the
webhook event catalog read every service's spec without loading any service's code.
Nothing lists the services by hand.
"""

from __future__ import annotations

import importlib
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

import pluggy

from common.config import Settings

PROJECT = "feedback"
ENTRY_POINT_GROUP = "feedback.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
RATE_LIMITED = ("write", "search")  # what the gateway limits per caller and address (gateway/limits.py)


@dataclass(frozen=True)
class Route:
    """One URI template of a service, the methods it serves and the resource class serving it.

    ``template`` is relative to ``/v1`` for public routes; internal routes are absolute.
    ``resource`` is ``"module:Class"``; the class is built as ``Class(context)``.
    ``limits``: ``{method: "write" | "search"}``, the rate limit the gateway applies to it.
    ``headers``: for a page (``ServiceSpec.pages``), request headers the gateway passes through
    beyond the ones every page gets (e.g. ``Authorization`` for an endpoint that takes a bearer
    credential itself). Public API routes forward a fixed set and ignore it.
    """

    template: str
    resource: str
    methods: tuple[str, ...]
    limits: Mapping[str, str] = field(default_factory=dict)
    headers: tuple[str, ...] = ()

    def __post_init__(self):
        unknown = set(self.methods) - set(HTTP_METHODS)
        if not self.methods or unknown:
            raise ValueError(f"route {self.template}: methods must be some of {HTTP_METHODS}, not {self.methods}")
        if not set(self.limits) <= set(self.methods) or not set(self.limits.values()) <= set(RATE_LIMITED):
            raise ValueError(f"route {self.template}: limits name its methods and one of {RATE_LIMITED}")


class ServiceContext(Protocol):
    """What the kit needs of the object a service's ``create_context`` returns.

    Resources, consumers and workers receive the whole context; the kit itself only uses
    the service's ``store`` (health checks, relay, consumer markers) and ``start_api``."""

    store: Any  # common.db.Store

    def start_api(self) -> None:
        """Start what an API process needs besides serving (called once per process, after fork).

        A context may also have ``readiness() -> dict[str, Callable[[], None]]``: checks that
        raise while the process should stay out of rotation (``/readyz`` answers 503), e.g.
        while it warms a cache."""


@dataclass(frozen=True)
class ServiceSpec:
    """What one service is and does, as data.

    - ``name``: the service's name; its database is ``<prefix><name>``, its URL ``SERVICE_URL_<NAME>``.
    - ``context``: ``"module:function"``; ``function(settings)`` returns a :class:`ServiceContext`
      that every resource, consumer and worker of the process receives.
    - ``routes``: public :class:`Route`\\ s, served under ``/v1`` and proxied by the gateway.
    - ``internal_routes``: routes only sibling services call (signed, never proxied).
    - ``topic``: the Kafka topic this service publishes to through its outbox (or ``None``).
    - ``events``: ``{event type: JSON schema of its data}`` of every event on ``topic``; the
      webhook event catalog, ``feedback init``, the OpenAPI document's ``webhooks`` and
      ``docs/events.md`` are derived from these.
    - ``consumes``: topics this service's consumer group reads; ``consumers`` is
      ``"module:function"`` and ``function(context)`` returns ``{topic: handler(event)}``.
    - ``models``: ``"module:NAME"`` of a sequence of mongoengine Documents whose indexes
      ``feedback init`` creates.
    - ``workers``: background loops by name, each ``"module:function"`` run as
      ``function(context, stop_event)``.
    - ``openapi``: package-relative path of this service's OpenAPI fragment.
    - ``identity_path``: internal path that authenticates credentials (one service has it).
    - ``host_resolver_path``: internal path that maps a custom domain to its workspace:
      ``GET <path>?host=<host>`` answers ``{"slug": ...}`` or 404 (one service has it).
    - ``pages``: a web site's routes, absolute templates outside ``/v1`` (e.g. ``/b/{slug}``).
      The gateway proxies them with the visitor's cookies, forms and the pages' own headers,
      authenticating no API credential: the site signs its visitors in itself and calls
      ``/v1`` with their identity, so permissions and limits stay the API's.
      A page route may name extra request ``headers`` to pass through (``Route.headers``):
      the MCP endpoint takes ``Authorization`` and the protocol's own headers this way, and
      checks the bearer key itself through ``/v1``; the gateway stays ignorant of what they mean.
    - ``asgi``: ``"module:function"``; when set, ``function(settings, spec)`` returns an ASGI app
      that ``feedback serve`` runs (gunicorn's ASGI worker) instead of the Falcon app built from
      the routes. It must serve ``/healthz`` too. Its ``pages`` then name the ASGI app's paths
      (``resource`` is the same reference) for the gateway to proxy.
    - ``commands``: ``{name: "module:function"}``, subcommands of the ``feedback`` command this
      plugin contributes; ``function(argv)`` parses its own arguments (``feedback mcp ...``).
    - ``site_root``: the template under which a verified custom domain's other paths are
      served (``"/b/{slug}"``: ``https://feedback.customer.com/x`` is ``/b/acme/x``); one
      service has it.
    """

    name: str
    context: str
    routes: Sequence[Route] = ()
    internal_routes: Sequence[Route] = ()
    topic: str | None = None
    events: Mapping[str, dict] = field(default_factory=dict)
    consumes: Sequence[str] = ()
    consumers: str | None = None
    models: str | None = None
    workers: Mapping[str, str] = field(default_factory=dict)
    openapi: str | None = None
    identity_path: str | None = None
    host_resolver_path: str | None = None
    pages: Sequence[Route] = ()
    site_root: str | None = None
    asgi: str | None = None
    commands: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.events and not self.topic:
            raise ValueError(f"service {self.name}: events need a topic")
        if bool(self.consumes) != bool(self.consumers):
            raise ValueError(f"service {self.name}: consumes and consumers go together")

    @property
    def publishes(self) -> tuple[str, ...]:
        return (self.topic,) if self.topic else ()

    def worker_names(self) -> list[str]:
        names = ["relay"] if self.topic else []
        if self.consumers:
            names.append("consumer")
        return names + list(self.workers)

    def create_context(self, settings: Settings) -> ServiceContext:
        return resolve(self.context)(settings)

    def model_classes(self) -> Sequence[type]:
        return tuple(resolve(self.models)) if self.models else ()

    def openapi_path(self):
        """The fragment's file, found beside the package without importing it."""
        if self.openapi is None:
            return None
        package, _, relative = self.openapi.partition(":")
        from importlib.resources import files

        return files(package) / relative


def resolve(reference: str) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute."""
    module, _, attribute = reference.partition(":")
    if not attribute:
        raise ValueError(f"{reference!r} is not of the form 'module:attribute'")
    return getattr(importlib.import_module(module), attribute)


@hookspec
def register_service() -> ServiceSpec:
    """Return this plugin's ServiceSpec."""


Worker = Callable[[Any, threading.Event], None]  # what a ``workers`` reference names


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


def event_catalog(services: Mapping[str, ServiceSpec]) -> dict[str, str]:
    """Every event type a discovered service publishes, with its topic."""
    catalog: dict[str, str] = {}
    for spec in services.values():
        for type_ in spec.events:
            if type_ in catalog:
                raise RuntimeError(f"event type {type_} is declared by two services")
            catalog[type_] = spec.topic
    return catalog
