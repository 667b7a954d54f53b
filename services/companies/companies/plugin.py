"""The companies plugin: a workspace's customer companies, their monthly spend, and who belongs
to them (docs/services/companies.md). The posts service weighs votes by it (revenue).

Declarative: the gateway and ``feedback init`` read this spec without importing the service's
code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from companies import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from companies.service import CompaniesService

R = "companies.resources:"
W = "/workspaces/{slug}/companies"
ROUTES = [
    Route(W, R + "CompanyList", ("GET",)),
    Route(W + "/{companyId}", R + "CompanyItem", ("GET", "PUT", "DELETE")),
    Route(W + "/{companyId}/members", R + "MemberList", ("GET", "POST")),
    Route(W + "/{companyId}/members/{userId}", R + "MemberItem", ("DELETE",)),
]
# A page of a workspace's companies with their members for its export (portability).
PERSONAL_DATA = "/internal/companies/personal-data"
INTERNAL_ROUTES = [
    Route("/internal/companies/export", R + "CompaniesExport", ("POST",)),
    # The companies an import brings, with their members (portability).
    Route("/internal/companies/import", R + "CompaniesImport", ("POST",)),
    # The companies a person belongs to, for their download of their data (people.privacy).
    Route(PERSONAL_DATA, "common.app:PersonalData", ("POST",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    service: CompaniesService

    def personal_data(self, user_id: str, workspace: str | None) -> dict:
        return self.service.personal_data(user_id, workspace)


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.directory import People, Workspaces
    from companies.models import ALIAS
    from companies.repository import CompaniesRepository
    from companies.service import CompaniesService

    store = Store(settings, ALIAS)
    client = InternalClient(settings, timeout=10)
    service = CompaniesService(CompaniesRepository(store), Workspaces(client), People(client))
    return Context(settings=settings, store=store, service=service)


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="companies",
        context="companies.plugin:create_context",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        personal_data=PERSONAL_DATA,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        consumes=contract.CONSUMES,
        consumers="companies.consumers:handlers",
        models="companies.models:MODELS",
        openapi="companies:openapi.yaml",
    )
