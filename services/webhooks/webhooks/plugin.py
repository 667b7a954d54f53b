"""The webhooks plugin: what the platform needs to route to, initialise and run the service.

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from webhooks import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from webhooks.config import WebhooksConfig
    from webhooks.delivery_client import DeliveryClient
    from webhooks.repository import WebhookRepository
    from webhooks.service import WebhookService

R = "webhooks.resources:"
HOOK = "/workspaces/{slug}/webhooks/{webhookId}"
ROUTES = [
    Route("/workspaces/{slug}/webhooks", R + "WebhookList", ("GET", "POST")),
    # The event catalog, for a form's checkboxes (a literal segment: it never reads as a webhook id).
    Route("/workspaces/{slug}/webhooks/event-types", R + "EventTypes", ("GET",)),
    Route(HOOK, R + "WebhookItem", ("GET", "PATCH", "DELETE")),
    Route(HOOK + "/rotate-secret", R + "RotateSecret", ("POST",)),
    Route(HOOK + "/test", R + "Ping", ("POST",)),
    Route(HOOK + "/deliveries", R + "DeliveryList", ("GET",)),
    Route(HOOK + "/deliveries/{deliveryId}", R + "DeliveryItem", ("GET",)),
    Route(HOOK + "/deliveries/{deliveryId}/resend", R + "Resend", ("POST",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: WebhooksConfig
    catalog: dict[str, str | None]  # every deliverable event type -> its topic (None: never on a topic)
    repo: WebhookRepository  # the dispatcher's claims and outcomes
    service: WebhookService
    client: DeliveryClient  # the dispatcher's HTTP


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.plugins import event_catalog, load_services
    from common.directory import Workspaces
    from webhooks.config import load_config
    from webhooks.delivery_client import DeliveryClient
    from webhooks.models import ALIAS
    from webhooks.repository import WebhookRepository
    from webhooks.service import WebhookService
    from webhooks.urlguard import UrlPolicy

    config = load_config()
    store = Store(settings, ALIAS)
    repo = WebhookRepository(store)
    policy = UrlPolicy(config)
    catalog = {**event_catalog(load_services()), contract.WEBHOOK_TEST: None}
    workspaces = Workspaces(InternalClient(settings, timeout=5))
    return Context(
        settings=settings,
        config=config,
        store=store,
        catalog=catalog,
        repo=repo,
        service=WebhookService(repo, workspaces, config, policy, catalog),
        client=DeliveryClient(policy, config.timeout, config.concurrency),
    )


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="webhooks",
        context="webhooks.plugin:create_context",
        routes=ROUTES,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        models="webhooks.models:MODELS",
        workers={"dispatcher": "webhooks.dispatcher:run_dispatcher"},
        openapi="webhooks:openapi.yaml",
    )
