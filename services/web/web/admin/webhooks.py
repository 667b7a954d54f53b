"""Webhooks: the workspace's endpoints and adding one (its URL and the event types it takes, from
the webhooks service's catalog), and one endpoint's page: its recent deliveries (status code,
attempts, next retry) with a resend of each, a test ping, rotating the signing secret,
disabling or enabling it, and deleting it. A signing secret is shown once, on the page that
answers the creation or the rotation (never in a URL); deleting asks for a confirmation that
works without JavaScript (a ``<details>`` holding the final form)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from common.errors import NotFound
from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

ID = re.compile(r"[0-9a-f]{24}")
DELIVERIES = 20  # the deliveries an endpoint's page shows, newest first
# The page's words, in English (N_): translated where shown.
DONE = {
    "deleted": N_("The webhook was deleted, with its delivery log."),
    "test": N_("A test event is on its way: its delivery is listed below (reload to see its outcome)."),
    "disabled": N_("The webhook is disabled: it gets no new deliveries."),
    "enabled": N_("The webhook is enabled again."),
    "resent": N_("The delivery is queued again."),
}
REASONS = {"manual": N_("disabled by the team"), "gone": N_("the endpoint answered 410 Gone"),
           "failing": N_("every attempt failed for days")}
# A delivery's state (the webhooks service's), as its badge says it.
DELIVERY_STATES = {"pending": N_("Pending"), "succeeded": N_("Succeeded"), "failed": N_("Failed")}
# What the event types of a group (the catalog's ``<group>.<event>``) are about; another group
# is shown as the catalog names it.
EVENT_GROUPS = {
    "api_key": N_("API keys"), "changelog": N_("Changelog"), "comment": N_("Comments"), "company": N_("Companies"),
    "domain": N_("Custom domain"), "export": N_("Exports"), "import": N_("Imports"), "member": N_("Team members"),
    "membership": N_("Memberships"), "person": N_("People"), "post": N_("Posts"), "triage": N_("Triage"),
    "user": N_("Users"), "vote": N_("Votes"), "webhook": N_("Webhooks"), "workspace": N_("Workspace"),
}


def checked_id(value: str, what: str) -> str:
    """``value`` when it is an id as the API makes them; else the page is not found."""
    if not ID.fullmatch(value):
        raise NotFound(_("There is no webhook “%(id)s”.", id=value) if what == "webhook"
                       else _("There is no delivery “%(id)s”.", id=value))
    return value


def form_events(raw: str) -> list[str]:
    """The checked event types of a form (repeated ``events`` fields, as the body's order)."""
    return [v for k, v in parse_qsl(raw, keep_blank_values=False) if k == "events"]


class WebhooksSection(Section):
    path = "/webhooks"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200,
             typed: dict | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        hooks = self.call(visitor, "GET", "/webhooks")["items"]
        groups: dict[str, list[str]] = {}  # the catalog by what it is about (post.*, vote.*...), in its order
        for t in self.call(visitor, "GET", "/webhooks/event-types")["items"]:
            groups.setdefault(t["type"].split(".", 1)[0], []).append(t["type"])
        return self.page(visitor, "webhooks.html", {
            "hooks": hooks, "groups": groups, "group_names": EVENT_GROUPS, "reasons": REASONS,
            "typed": typed or {"url": "", "events": []}, "error": error,
            "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def create(self, visitor: Visitor, form: dict, events: list[str]):
        self.checked(visitor, form)
        typed = {"url": (form.get("url") or "").strip(), "events": events}
        try:
            hook = self.call(visitor, "POST", "/webhooks", payload=typed)
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status, typed)
        # The secret is in this answer only: the new endpoint's page shows it now.
        return self.detail(visitor, hook["id"], {}, secret=hook["secret"], fresh="created")

    def detail(self, visitor: Visitor, hook_id: str, params: dict, error: str | None = None, status: int = 200,
               secret: str | None = None, fresh: str = ""):
        if redirect := self.allowed(visitor):
            return redirect
        hook_id = checked_id(hook_id, "webhook")
        hook = self.call(visitor, "GET", f"/webhooks/{hook_id}")
        deliveries = self.call(visitor, "GET", f"/webhooks/{hook_id}/deliveries", query={"limit": DELIVERIES})["items"]
        return self.page(visitor, "webhook.html", {
            "hook": hook, "deliveries": deliveries, "secret": secret, "fresh": fresh, "reasons": REASONS,
            "states": DELIVERY_STATES, "error": error,
            "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def _act(self, visitor: Visitor, hook_id: str, form: dict, method: str, suffix: str, done: str, payload=None):
        """One action on an endpoint: its page again with ``done``, or with the API's refusal."""
        self.checked(visitor, form)
        hook_id = checked_id(hook_id, "webhook")
        try:
            self.call(visitor, method, f"/webhooks/{hook_id}{suffix}", payload=payload)
        except ApiError as ex:
            return self.detail(visitor, hook_id, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, f"/{hook_id}", done=done)

    def test(self, visitor: Visitor, hook_id: str, form: dict):
        return self._act(visitor, hook_id, form, "POST", "/test", "test")

    def state(self, visitor: Visitor, hook_id: str, form: dict):
        disable = form.get("action") == "disable"
        return self._act(visitor, hook_id, form, "PATCH", "", "disabled" if disable else "enabled",
                         payload={"disabled": disable})

    def resend(self, visitor: Visitor, hook_id: str, delivery_id: str, form: dict):
        delivery_id = checked_id(delivery_id, "delivery")
        return self._act(visitor, hook_id, form, "POST", f"/deliveries/{delivery_id}/resend", "resent")

    def rotate(self, visitor: Visitor, hook_id: str, form: dict):
        self.checked(visitor, form)
        hook_id = checked_id(hook_id, "webhook")
        try:
            hook = self.call(visitor, "POST", f"/webhooks/{hook_id}/rotate-secret")
        except ApiError as ex:
            return self.detail(visitor, hook_id, {}, self.refusal(ex), ex.status)
        return self.detail(visitor, hook_id, {}, secret=hook["secret"], fresh="rotated")

    def delete(self, visitor: Visitor, hook_id: str, form: dict):
        self.checked(visitor, form)
        hook_id = checked_id(hook_id, "webhook")
        try:
            self.call(visitor, "DELETE", f"/webhooks/{hook_id}")
        except ApiError as ex:
            return self.detail(visitor, hook_id, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done="deleted")


def _body(req) -> str:
    body = req.context.get("body")
    if body is None:
        body = req.bounded_stream.read()
        req.context["body"] = body
    return body.decode("utf-8", "replace")


class Webhooks(SectionResource):
    section = WebhooksSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        raw = _body(req)
        self.respond(req, resp, slug, self.admin.create, form(req), form_events(raw))


class Webhook(SectionResource):
    section = WebhooksSection

    def on_get(self, req, resp, slug, webhookId):
        self.respond(req, resp, slug, self.admin.detail, webhookId, query(req))


class WebhookTest(SectionResource):
    section = WebhooksSection

    def on_post(self, req, resp, slug, webhookId):
        self.respond(req, resp, slug, self.admin.test, webhookId, form(req))


class WebhookState(SectionResource):
    section = WebhooksSection

    def on_post(self, req, resp, slug, webhookId):
        self.respond(req, resp, slug, self.admin.state, webhookId, form(req))


class WebhookRotate(SectionResource):
    section = WebhooksSection

    def on_post(self, req, resp, slug, webhookId):
        self.respond(req, resp, slug, self.admin.rotate, webhookId, form(req))


class WebhookDelete(SectionResource):
    section = WebhooksSection

    def on_post(self, req, resp, slug, webhookId):
        self.respond(req, resp, slug, self.admin.delete, webhookId, form(req))


class WebhookResend(SectionResource):
    section = WebhooksSection

    def on_post(self, req, resp, slug, webhookId, deliveryId):
        self.respond(req, resp, slug, self.admin.resend, webhookId, deliveryId, form(req))
