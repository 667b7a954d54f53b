"""Falcon resources of the webhooks service, one class per URI template. Managers only."""

from __future__ import annotations

import falcon

from common.errors import Conflict
from common.validation import body, choice_param, int_param
from webhooks import contract, schemas, shapes


class Resource:
    def __init__(self, context):
        self.endpoints = context.endpoints
        self.deliveries = context.deliveries
        self.workspaces = context.workspaces

    def manager(self, req, slug: str) -> None:
        self.workspaces.require_manager(req.context.caller, slug)


class WebhookList(Resource):
    def on_get(self, req, resp, slug):
        self.manager(req, slug)
        resp.media = {"items": [shapes.webhook(d) for d in self.endpoints.list(slug)]}

    def on_post(self, req, resp, slug):
        self.manager(req, slug)
        data = body(req, schemas.CREATE_WEBHOOK)
        doc = self.endpoints.create(slug, data["url"], data.get("events") or [])
        resp.status = falcon.HTTP_201
        resp.media = shapes.webhook_with_secret(doc)


class WebhookItem(Resource):
    def on_get(self, req, resp, slug, webhookId):
        self.manager(req, slug)
        resp.media = shapes.webhook(self.endpoints.get(slug, webhookId))

    def on_patch(self, req, resp, slug, webhookId):
        self.manager(req, slug)
        resp.media = shapes.webhook(self.endpoints.update(slug, webhookId, body(req, schemas.UPDATE_WEBHOOK)))

    def on_delete(self, req, resp, slug, webhookId):
        self.manager(req, slug)
        resp.media = shapes.webhook(self.endpoints.delete(slug, webhookId))


class RotateSecret(Resource):
    def on_post(self, req, resp, slug, webhookId):
        self.manager(req, slug)
        resp.media = shapes.webhook_with_secret(self.endpoints.rotate(slug, webhookId))


class Ping(Resource):
    def on_post(self, req, resp, slug, webhookId):
        self.manager(req, slug)
        endpoint = self.endpoints.get(slug, webhookId)
        if endpoint["disabled"]:
            raise Conflict("the webhook is disabled; enable it first (PATCH with disabled: false)")
        resp.status = falcon.HTTP_201
        resp.media = shapes.delivery(self.deliveries.ping(endpoint), with_payload=True)


class DeliveryList(Resource):
    def on_get(self, req, resp, slug, webhookId):
        self.manager(req, slug)
        endpoint = self.endpoints.get(slug, webhookId)
        status = choice_param(req, "status", "", ("", *contract.DELIVERY_STATES)) or None
        limit = int_param(req, "limit", 20, 1, 100)
        offset = int_param(req, "offset", 0, 0, 100_000)
        items = self.deliveries.list(endpoint["_id"], status, limit, offset)
        resp.media = {"items": [shapes.delivery(d) for d in items]}


class DeliveryItem(Resource):
    def on_get(self, req, resp, slug, webhookId, deliveryId):
        self.manager(req, slug)
        endpoint = self.endpoints.get(slug, webhookId)
        resp.media = shapes.delivery(self.deliveries.get(endpoint["_id"], deliveryId), with_payload=True)


class Resend(Resource):
    def on_post(self, req, resp, slug, webhookId, deliveryId):
        self.manager(req, slug)
        endpoint = self.endpoints.get(slug, webhookId)
        if endpoint["disabled"]:
            raise Conflict("the webhook is disabled; enable it first (PATCH with disabled: false)")
        resp.media = shapes.delivery(self.deliveries.resend(endpoint["_id"], deliveryId), with_payload=True)
