"""The webhooks plugin: its routes, topic, models and the dispatcher worker, for the platform."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common.config import Settings
from common.db import Store
from common.internal import InternalClient
from common.plugins import ServiceSpec, hookimpl
from common.workspace_directory import WorkspaceDirectory
from webhooks import contract, resources as r
from webhooks.config import WebhookSettings, load_webhook_settings
from webhooks.deliveries import DeliveryStore
from webhooks.delivery_client import DeliveryClient
from webhooks.dispatcher import run_dispatcher
from webhooks.endpoints import EndpointService
from webhooks.models import ALIAS, MODELS
from webhooks.urlguard import UrlPolicy

HOOK = "/workspaces/{slug}/webhooks/{webhookId}"
ROUTES = [
    ("/workspaces/{slug}/webhooks", r.WebhookList),
    (HOOK, r.WebhookItem),
    (HOOK + "/rotate-secret", r.RotateSecret),
    (HOOK + "/test", r.Ping),
    (HOOK + "/deliveries", r.DeliveryList),
    (HOOK + "/deliveries/{deliveryId}", r.DeliveryItem),
    (HOOK + "/deliveries/{deliveryId}/resend", r.Resend),
]


@dataclass
class Context:
    settings: Settings
    webhook_settings: WebhookSettings
    store: Store
    endpoints: EndpointService
    deliveries: DeliveryStore
    workspaces: WorkspaceDirectory
    client: DeliveryClient


def create_context(settings: Settings) -> Context:
    webhook_settings = load_webhook_settings()
    store = Store(settings, ALIAS)
    policy = UrlPolicy(webhook_settings)
    return Context(
        settings=settings,
        webhook_settings=webhook_settings,
        store=store,
        endpoints=EndpointService(store, webhook_settings, policy),
        deliveries=DeliveryStore(),
        workspaces=WorkspaceDirectory(InternalClient(settings, timeout=5)),
        client=DeliveryClient(policy, webhook_settings.timeout, webhook_settings.concurrency),
    )


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="webhooks",
        routes=ROUTES,
        create_context=create_context,
        publishes=[contract.TOPIC],
        models=MODELS,
        workers={"dispatcher": run_dispatcher},
        openapi=Path(__file__).with_name("openapi.yaml"),
    )
