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
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import pluggy

from common.config import Settings

if TYPE_CHECKING:  # the gateway loads this module and needs no database driver
    from common.db import Store

PROJECT = "feedback"
ENTRY_POINT_GROUP = "feedback.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
RATE_LIMITED = ("write", "search")  # what the gateway limits per caller and address (gateway/limits.py)
BUDGET_NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


@dataclass(frozen=True)
class Budget:
    """A budget of a route's own, for an operation whose cost no class budget bounds (a save
    that rescores every post of a workspace): at most ``quota`` requests per ``window`` seconds
    per workspace, its team's (its manager keys, signed-in members and the operator) together.
    The gateway spends it besides the request's class budget; callers outside the team spend
    none of it (the route is the team's: the service refuses them), so nobody can use the
    team's budget up. ``name`` is the policy its ``RateLimit`` fields and its 429 name, and its
    entry in the gateway's ``RATE_LIMIT_ROUTES`` setting, which may change or turn it off."""

    name: str
    quota: int
    window: float = 60

    def __post_init__(self):
        if not BUDGET_NAME.match(self.name) or self.quota < 1 or self.window <= 0:
            raise ValueError(f"budget {self.name!r}: a name of {BUDGET_NAME.pattern}, a quota of at least 1, a window over 0 s")


@dataclass(frozen=True)
class Route:
    """One URI template of a service, the methods it serves and the resource class serving it.

    ``template`` is relative to ``/v1`` for public routes; internal routes are absolute.
    ``resource`` is ``"module:Class"``; the class is built as ``Class(context)``.
    ``limits``: ``{method: "write" | "search"}``, the rate limit the gateway applies to it.
    ``budgets``: ``{method: Budget}``, a budget of the route's own the gateway spends too.
    ``headers``: for a page (``ServiceSpec.pages``), request headers the gateway passes through
    beyond the ones every page gets (e.g. ``Authorization`` for an endpoint that takes a bearer
    credential itself). Public API routes forward a fixed set and ignore it.
    ``max_body``: the largest request body in bytes the route takes, in place of the
    deployment's ``MAX_BODY_BYTES`` (an upload of a whole file, e.g. an import); None: that one.
    """

    template: str
    resource: str
    methods: tuple[str, ...]
    limits: Mapping[str, str] = field(default_factory=dict)
    headers: tuple[str, ...] = ()
    budgets: Mapping[str, Budget] = field(default_factory=dict)
    max_body: int | None = None

    def __post_init__(self):
        unknown = set(self.methods) - set(HTTP_METHODS)
        if not self.methods or unknown:
            raise ValueError(f"route {self.template}: methods must be some of {HTTP_METHODS}, not {self.methods}")
        if not set(self.limits) <= set(self.methods) or not set(self.limits.values()) <= set(RATE_LIMITED):
            raise ValueError(f"route {self.template}: limits name its methods and one of {RATE_LIMITED}")
        if not set(self.budgets) <= set(self.methods) or not all(isinstance(b, Budget) for b in self.budgets.values()):
            raise ValueError(f"route {self.template}: budgets name its methods and a Budget each")
        if self.max_body is not None and (not isinstance(self.max_body, int) or isinstance(self.max_body, bool) or self.max_body <= 0):
            raise ValueError(f"route {self.template}: max_body is a positive number of bytes, not {self.max_body!r}")


@dataclass(kw_only=True)
class ServiceContext:
    """What a service's ``create_context(settings)`` returns, derived by each service's own
    ``Context`` with what its resources, consumers and workers need (its config, its service
    object): they all receive the whole context.

    The kit itself uses ``settings``, ``store`` (health checks, relay, consumer markers),
    :meth:`start_api` and :meth:`readiness`; a service overrides either where it has work to do.
    """

    settings: Settings
    store: Store | None  # None: a service without a database of its own (the MCP server)

    def start_api(self) -> None:
        """Start what an API process needs besides serving: called once per process, after
        fork. Nothing, unless a service says otherwise."""

    def readiness(self) -> dict[str, Callable[[], None]]:
        """Checks that raise while the process should stay out of rotation (``/readyz``
        answers 503), e.g. while it warms a cache. None, unless a service says otherwise."""
        return {}

    def personal_data(self, user_id: str, workspace: str | None) -> dict:
        """What this service keeps about ``user_id`` (in ``workspace``, or in all), as
        ``{kind: [items]}``: a service declaring ``ServiceSpec.personal_data`` routes that path
        to ``common.app:PersonalData``, which answers this. Nothing, unless a service says otherwise."""
        return {}


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
    - ``identity_path``: internal path that authenticates credentials (one service at most
      declares it, as ``host_resolver_path`` and ``site_root``: see ``SOLE``).
    - ``host_resolver_path``: internal path that maps a custom domain to its workspace:
      ``GET <path>?host=<host>`` answers ``{"slug": ...}`` or 404.
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
      served (``"/b/{slug}"``: ``https://feedback.customer.com/x`` is ``/b/acme/x``).
    - ``personal_data``: internal path of a service that keeps data about people: ``POST <path>``
      ``{"userId": ..., "workspace": slug or null}`` answers ``{kind: [items]}``, what it keeps
      about that user (in one workspace, or in all); the service routes it to the kit's
      ``common.app:PersonalData``, which asks its context's ``personal_data``. The people service gathers these for a
      person's download of their data (docs/privacy.md); erasing is the ``person.erased`` event.
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
    personal_data: str | None = None

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


Worker = Callable[[ServiceContext, threading.Event], None]  # what a ``workers`` reference names


def make_plugin_manager(load_entry_points: bool = True, plugins: Sequence[object] = ()) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(sys.modules[__name__])
    for plugin in plugins:
        pm.register(plugin)
    if load_entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def load_services(pm: pluggy.PluginManager | None = None) -> dict[str, ServiceSpec]:
    """Return every discovered service by name (sorted, so routing is deterministic); refuse
    two services of one name, or two declaring what only one may (``SOLE``)."""
    pm = pm or make_plugin_manager()
    specs = pm.hook.register_service()
    names = [s.name for s in specs]
    if len(names) != len(set(names)):
        raise RuntimeError(f"two plugins share a service name: {sorted(names)}")
    services = {s.name: s for s in sorted(specs, key=lambda s: s.name)}
    for field_name in SOLE:
        sole(services, field_name)
    return services


# ServiceSpec fields only one service may declare: the platform has one identity check, one
# custom-domain resolver and one site that custom domains serve.
SOLE = ("identity_path", "host_resolver_path", "site_root")


def sole(services: Mapping[str, ServiceSpec], field_name: str) -> tuple[str, Any] | None:
    """``(service, value)`` of the one service declaring ``field_name`` (one of ``SOLE``), or
    None when none does. Two declaring it are refused, naming both, rather than one of them
    being picked by the order of their names."""
    declared = [(name, getattr(spec, field_name)) for name, spec in services.items() if getattr(spec, field_name)]
    if len(declared) > 1:
        raise RuntimeError(
            f"{field_name} is declared by {' and '.join(name for name, _ in declared)}; only one service may declare it"
        )
    return declared[0] if declared else None


def event_catalog(services: Mapping[str, ServiceSpec]) -> dict[str, str]:
    """Every event type a discovered service publishes, with its topic."""
    catalog: dict[str, str] = {}
    for spec in services.values():
        for type_ in spec.events:
            if type_ in catalog:
                raise RuntimeError(f"event type {type_} is declared by two services")
            catalog[type_] = spec.topic
    return catalog
