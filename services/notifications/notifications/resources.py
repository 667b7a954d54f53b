"""Falcon resources of the notifications service, one class per URI template: HTTP only."""

from __future__ import annotations

import falcon

from common.validation import media, page_params
from notifications import schemas


class Resource:
    def __init__(self, context):
        self.service = context.service
        self.subscriptions = context.subscriptions


class Follow(Resource):
    """GET / PUT /v1/workspaces/{slug}/posts/{postId}/follow: whether the signed-in person follows a post."""

    def on_get(self, req, resp, slug, postId):
        resp.media = self.service.follow_state(req.context.caller, slug, postId)

    def on_put(self, req, resp, slug, postId):
        resp.media = self.service.set_follow(req.context.caller, slug, postId, media(req))


class MyNotifications(Resource):
    """GET / PATCH /v1/workspaces/{slug}/me/notifications: the signed-in person's preferences."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.preferences(req.context.caller, slug)

    def on_patch(self, req, resp, slug):
        resp.media = self.service.update_preferences(req.context.caller, slug, media(req))


class MyChangelogSeen(Resource):
    """GET / PUT /v1/workspaces/{slug}/me/changelog-seen: the person's last look at the changelog."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.changelog_seen(req.context.caller, slug)

    def on_put(self, req, resp, slug):
        resp.media = self.service.see_changelog(req.context.caller, slug)


class Unsubscribe(Resource):
    """POST /v1/workspaces/{slug}/notifications/unsubscribe: a mail's one-click unsubscribe."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.unsubscribe(slug, media(req))


class Delivery(Resource):
    """GET /v1/workspaces/{slug}/notifications/delivery: how the workspace's mail fares (team)."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.delivery(req.context.caller, slug)


class Suppressions(Resource):
    """GET /v1/workspaces/{slug}/notifications/suppressions: addresses no longer mailed (team)."""

    def on_get(self, req, resp, slug):
        limit, offset = page_params(req, schemas.SUPPRESSIONS_PAGE)
        resp.media = self.service.suppressions(req.context.caller, slug, limit, offset)


class Suppression(Resource):
    """DELETE /v1/workspaces/{slug}/notifications/suppressions/{address}: mail an address again (team)."""

    def on_delete(self, req, resp, slug, address):
        self.service.lift_suppression(req.context.caller, slug, address)
        resp.status = falcon.HTTP_204


class ChangelogSubscriptions(Resource):
    """POST /v1/workspaces/{slug}/changelog/subscriptions: anyone asks for the changelog by email
    (202: a confirmation mail, or nothing, the same answer); GET: the subscribers (team)."""

    def on_post(self, req, resp, slug):
        resp.media = self.subscriptions.subscribe(slug, media(req))
        resp.status = falcon.HTTP_202

    def on_get(self, req, resp, slug):
        limit, offset = page_params(req, schemas.SUBSCRIPTIONS_PAGE)
        resp.media = self.subscriptions.listing(req.context.caller, slug, limit, offset)


class ChangelogSubscriptionConfirm(Resource):
    """POST /v1/workspaces/{slug}/changelog/subscriptions/confirm: the confirmation mail's link."""

    def on_post(self, req, resp, slug):
        resp.media = self.subscriptions.confirm(slug, media(req))


class ChangelogSubscriptionUnsubscribe(Resource):
    """POST /v1/workspaces/{slug}/changelog/subscriptions/unsubscribe: a subscriber mail's one-click unsubscribe."""

    def on_post(self, req, resp, slug):
        resp.media = self.subscriptions.unsubscribe(slug, media(req))


class MyChangelogSubscription(Resource):
    """GET / PUT /v1/workspaces/{slug}/me/changelog-subscription: the signed-in person's own address."""

    def on_get(self, req, resp, slug):
        resp.media = self.subscriptions.mine(req.context.caller, slug)

    def on_put(self, req, resp, slug):
        resp.media = self.subscriptions.set_mine(req.context.caller, slug, media(req))

