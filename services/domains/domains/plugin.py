"""The domains plugin: its routes, topic, models and re-check worker, for the platform."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common.config import Settings
from common.db import Store
from common.internal import InternalClient
from common.plugins import ServiceSpec, hookimpl
from common.workspace_directory import WorkspaceDirectory
from domains import config as domain_config, contract, rechecker, resources as r
from domains.config import DomainSettings
from domains.dns_check import DnsChecker
from domains.models import ALIAS, MODELS
from domains.services import DomainService

ROUTES = [
    ("/workspaces/{slug}/domain", r.Domain),
    ("/workspaces/{slug}/domain/verify", r.DomainVerify),
]

RESOLVE_PATH = "/internal/domains/resolve"
INTERNAL_ROUTES = [(RESOLVE_PATH, r.ResolveHost)]


@dataclass
class Context:
    settings: Settings
    config: DomainSettings
    store: Store
    service: DomainService
    workspaces: WorkspaceDirectory


def create_context(settings: Settings) -> Context:
    config = domain_config.load(settings)
    store = Store(settings, ALIAS)
    service = DomainService(store, config, DnsChecker(config))
    return Context(settings, config, store, service, WorkspaceDirectory(InternalClient(settings, timeout=5)))


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="domains",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        create_context=create_context,
        publishes=[contract.TOPIC],
        models=MODELS,
        workers={"rechecker": rechecker.run},
        openapi=Path(__file__).with_name("openapi.yaml"),
        host_resolver_path=RESOLVE_PATH,
    )
