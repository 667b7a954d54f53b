"""The workspaces plugin: what the platform needs to route to, initialise and run the service.

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from workspaces import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from workspaces.service import WorkspaceService

R = "workspaces.resources:"
ROUTES = [
    Route("/workspaces", R + "WorkspaceList", ("POST",)),
    Route("/workspaces/{slug}", R + "WorkspaceItem", ("GET", "PATCH")),
    Route("/workspaces/{slug}/settings", R + "SettingsItem", ("GET", "PATCH")),
    Route("/workspaces/{slug}/branding", R + "Branding", ("GET",)),
    Route("/workspaces/{slug}/logo", R + "Logo", ("GET", "PUT", "DELETE")),
    Route("/workspaces/{slug}/agent-context", R + "AgentContext", ("GET",)),
    Route("/workspaces/{slug}/boards", R + "BoardList", ("GET", "POST")),
    Route("/workspaces/{slug}/boards/{boardId}", R + "BoardItem", ("PATCH", "DELETE")),
    Route("/workspaces/{slug}/statuses", R + "StatusList", ("GET", "POST")),
    Route("/workspaces/{slug}/statuses/{statusSlug}", R + "StatusItem", ("PATCH", "DELETE")),
    Route("/workspaces/{slug}/api-keys", R + "ApiKeyList", ("GET", "POST")),
    Route("/workspaces/{slug}/api-keys/{keyId}", R + "ApiKeyItem", ("DELETE",)),
    Route("/api-key", R + "CurrentApiKey", ("GET",)),
    Route("/workspaces/{slug}/changelogs", R + "ChangelogList", ("GET", "POST")),
    Route("/workspaces/{slug}/changelogs/{changelogId}", R + "ChangelogItem", ("GET", "PATCH")),
]

# Where the people service (the platform's identity check) asks about API keys and SSO tokens.
CREDENTIALS_PATH = "/internal/credentials"
INTERNAL_ROUTES = [
    Route(CREDENTIALS_PATH, R + "Identity", ("POST",)),
    Route("/internal/workspaces/{slug}/snapshot", R + "SnapshotItem", ("GET",)),
    # A page of a workspace's boards, statuses, changelogs or settings for its export (portability).
    Route("/internal/workspaces/export", R + "Export", ("POST",)),
    # A batch of boards, statuses or changelog entries an import brings (portability).
    Route("/internal/workspaces/import", R + "Import", ("POST",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    service: WorkspaceService


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.secretbox import default_box
    from workspaces.models import ALIAS
    from common.directory import Posts
    from workspaces.repository import WorkspaceRepository
    from workspaces.service import WorkspaceService

    store = Store(settings, ALIAS)
    posts = Posts(InternalClient(settings, timeout=5))
    return Context(settings=settings, store=store, service=WorkspaceService(WorkspaceRepository(store, default_box()), posts,
                                                                       settings.public_base_url))


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="workspaces",
        context="workspaces.plugin:create_context",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        consumes=contract.CONSUMES,
        consumers="workspaces.consumers:handlers",
        models="workspaces.models:MODELS",
        openapi="workspaces:openapi.yaml",
        # Step 2 of a SECRETS_KEYS rotation, for every service's sealed fields (common.secretbox).
        commands={"reseal-secrets": "common.secretbox:reseal_command"},
    )
