"""Falcon resources of the webhooks service, one class per URI template: HTTP only.

Each reads the path, query and body, calls the service (which checks that the caller
manages the workspace, then what was asked), and sets the status and media it returns.
"""

from __future__ import annotations

import falcon

from common.validation import media, page_params, param
from webhooks import schemas


class Resource:
    def __init__(self, context):
        self.service = context.service


class WebhookList(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.list(req.context.caller, slug)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.create(req.context.caller, slug, media(req))


class EventTypes(Resource):
    def on_get(self, req, resp, slug):
        resp.media = self.service.event_types(req.context.caller, slug)


class WebhookItem(Resource):
    def on_get(self, req, resp, slug, webhookId):
        resp.media = self.service.get(req.context.caller, slug, webhookId)

    def on_patch(self, req, resp, slug, webhookId):
        resp.media = self.service.update(req.context.caller, slug, webhookId, media(req))

    def on_delete(self, req, resp, slug, webhookId):
        resp.media = self.service.delete(req.context.caller, slug, webhookId)


class RotateSecret(Resource):
    def on_post(self, req, resp, slug, webhookId):
        resp.media = self.service.rotate(req.context.caller, slug, webhookId)


class Ping(Resource):
    def on_post(self, req, resp, slug, webhookId):
        resp.status = falcon.HTTP_201
        resp.media = self.service.ping(req.context.caller, slug, webhookId)


class DeliveryList(Resource):
    def on_get(self, req, resp, slug, webhookId):
        status = param(req, "status", schemas.DELIVERY_STATUS)
        limit, offset = page_params(req, schemas.DELIVERIES_LIMIT)
        resp.media = self.service.deliveries(req.context.caller, slug, webhookId, status, limit, offset)


class DeliveryItem(Resource):
    def on_get(self, req, resp, slug, webhookId, deliveryId):
        resp.media = self.service.delivery(req.context.caller, slug, webhookId, deliveryId)


class Resend(Resource):
    def on_post(self, req, resp, slug, webhookId, deliveryId):
        resp.media = self.service.resend(req.context.caller, slug, webhookId, deliveryId)
