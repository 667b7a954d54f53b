"""The domains plugin: what the platform needs to route to, initialise and run the service.

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from domains import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from domains.config import DomainsConfig
    from domains.service import DomainService

R = "domains.resources:"
ROUTES = [
    Route("/workspaces/{slug}/domain", R + "Domain", ("GET", "PUT", "DELETE")),
    Route("/workspaces/{slug}/domain/verify", R + "DomainVerify", ("POST",)),
]

RESOLVE_PATH = "/internal/domains/resolve"
INTERNAL_ROUTES = [Route(RESOLVE_PATH, R + "ResolveHost", ("GET",))]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: DomainsConfig
    service: DomainService  # the re-check worker uses it too


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.directory import Workspaces
    from domains.config import load_config
    from domains.dns_check import DnsChecker
    from domains.models import ALIAS
    from domains.repository import DomainRepository
    from domains.service import DomainService

    config = load_config(settings)
    store = Store(settings, ALIAS)
    workspaces = Workspaces(InternalClient(settings, timeout=5))
    service = DomainService(DomainRepository(store), workspaces, config, DnsChecker(config))
    return Context(settings=settings, store=store, config=config, service=service)


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="domains",
        context="domains.plugin:create_context",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        models="domains.models:MODELS",
        workers={"rechecker": "domains.rechecker:run"},
        openapi="domains:openapi.yaml",
        host_resolver_path=RESOLVE_PATH,
    )
