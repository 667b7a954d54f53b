"""The workspaces plugin: its routes, topics, consumers and models, for the platform."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common.config import Settings
from common.db import Store
from common.internal import InternalClient
from common.plugins import ServiceSpec, hookimpl
from workspaces import contract, resources as r
from workspaces.consumers import handlers
from workspaces.models import ALIAS, MODELS
from workspaces.post_directory import PostDirectory
from workspaces.services import WorkspaceService

ROUTES = [
    ("/workspaces", r.WorkspaceList),
    ("/workspaces/{slug}", r.WorkspaceItem),
    ("/workspaces/{slug}/settings", r.Settings),
    ("/workspaces/{slug}/branding", r.Branding),
    ("/workspaces/{slug}/agent-context", r.AgentContext),
    ("/workspaces/{slug}/boards", r.BoardList),
    ("/workspaces/{slug}/statuses", r.StatusList),
    ("/workspaces/{slug}/statuses/{statusSlug}", r.StatusItem),
    ("/workspaces/{slug}/api-keys", r.ApiKeyList),
    ("/workspaces/{slug}/api-keys/{keyId}", r.ApiKeyItem),
    ("/workspaces/{slug}/changelogs", r.ChangelogList),
    ("/workspaces/{slug}/changelogs/{changelogId}", r.ChangelogItem),
]

IDENTITY_PATH = "/internal/identity"
INTERNAL_ROUTES = [
    (IDENTITY_PATH, r.Identity),
    ("/internal/workspaces/{slug}/snapshot", r.Snapshot),
]


@dataclass
class Context:
    settings: Settings
    store: Store
    service: WorkspaceService


def create_context(settings: Settings) -> Context:
    store = Store(settings, ALIAS)
    return Context(settings, store, WorkspaceService(store, PostDirectory(InternalClient(settings, timeout=5))))


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="workspaces",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        create_context=create_context,
        publishes=[contract.TOPIC],
        consumers=handlers,
        models=MODELS,
        openapi=Path(__file__).with_name("openapi.yaml"),
        identity_path=IDENTITY_PATH,
    )
