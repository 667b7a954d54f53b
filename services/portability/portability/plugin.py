"""The portability plugin: a workspace's data moved in and out (imports and exports as jobs).

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from portability import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from portability.config import PortabilityConfig
    from portability.erasure import Erasure
    from portability.exporter import Exporter
    from portability.importer import Importer
    from portability.imports import ImportService
    from portability.service import ExportService

R = "portability.resources:"
E = "/workspaces/{slug}/exports"
I = "/workspaces/{slug}/imports"
ROUTES = [
    Route(E, R + "ExportList", ("GET", "POST"), limits={"POST": "write"}),
    Route(E + "/{exportId}", R + "ExportItem", ("GET",)),
    Route(E + "/{exportId}/download", R + "ExportDownload", ("GET",)),
    # The file to import is the body: far above MAX_BODY_BYTES (contract.IMPORT_MAX_BYTES).
    Route(I, R + "ImportList", ("GET", "POST"), limits={"POST": "write"}, max_body=contract.IMPORT_MAX_BYTES),
    Route(I + "/{importId}", R + "ImportItem", ("GET",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: PortabilityConfig
    service: ExportService
    exporter: Exporter  # the worker runs exports with it
    imports: ImportService
    importer: Importer  # and imports with this one
    erasure: Erasure  # a person erased: the kept exports naming them


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.directory import Workspaces
    from common.internal import InternalClient
    from portability.config import load_config
    from portability.erasure import Erasure
    from portability.exporter import Exporter
    from portability.importer import Importer
    from portability.imports import ImportRepository, ImportService
    from portability.models import ALIAS
    from portability.repository import ExportRepository
    from portability.service import ExportService
    from portability.sources import Sources

    config = load_config()
    store = Store(settings, ALIAS)
    repo = ExportRepository(store)
    # A page of a big workspace may take the owner a while: a longer read timeout than a lookup's.
    sources = Sources(InternalClient(settings, timeout=60), config.page_size)
    service = ExportService(repo, Workspaces(InternalClient(settings, timeout=5)))
    imports = ImportRepository(store)
    # A batch of an import may take an owner a while too (each item is a few writes).
    importer = Importer(imports, InternalClient(settings, timeout=120), config, repo)
    return Context(settings=settings, store=store, config=config, service=service, exporter=Exporter(repo, sources, config),
                   imports=ImportService(imports, service._require_manager), importer=importer,
                   erasure=Erasure(repo, settings.internal_secret))


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="portability",
        context="portability.plugin:create_context",
        routes=ROUTES,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        models="portability.models:MODELS",
        consumes=contract.CONSUMES,
        consumers="portability.consumers:handlers",
        workers={"exporter": "portability.worker:run"},
        openapi="portability:openapi.yaml",
    )
