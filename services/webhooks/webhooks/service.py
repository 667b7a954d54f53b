"""The webhooks service's rules: endpoints, their secrets, the delivery log, and when an
endpoint gets disabled.

Managers only: every API method checks first, once, that the caller manages the workspace
(the operator's requests also ask the workspaces service whether it exists); only then is
the body validated (a caller without the right learns nothing from validation). URLs go
through the SSRF guard (:mod:`webhooks.urlguard`) and event types are checked against the
catalog the plugins declare, so the messages can say why a URL is refused and list the known
types. Each method returns the response shape; the secret appears only in the creation and
rotation responses. Database commands are the repository's.

Disabling an endpoint, by a manager (PATCH) or by the sender (410 Gone, or failing for
WEBHOOK_DISABLE_AFTER_SECONDS), writes ``webhook.disabled`` to the outbox in the same
transaction, once.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from bson import ObjectId

from common import auth
from common.errors import BadRequest, Conflict, NotFound
from common.ids import iso, now, object_id
from common.validation import check
from common.directory import Workspaces
from webhooks import contract, schemas, shapes
from webhooks.config import WebhooksConfig
from webhooks.repository import WebhookRepository
from webhooks.signing import new_secret, payload
from webhooks.urlguard import UrlPolicy, UrlRefused

TEST_MESSAGE = "This is a test event from your feedback workspace."


def subscribes(endpoint: dict, type_: str, happened_at: datetime) -> bool:
    """Whether the endpoint takes this event: its type is subscribed, and the endpoint existed
    when it happened (so a new endpoint is not flooded with events replayed from Kafka)."""
    wanted = not endpoint.get("events") or type_ in endpoint["events"]
    return wanted and _aware(endpoint["createdAt"]) <= happened_at


class NotDisabled(Exception):
    """Raised inside the transaction to undo the event when the endpoint was disabled meanwhile."""


class WebhookService:
    def __init__(
        self,
        repo: WebhookRepository,
        workspaces: Workspaces,
        config: WebhooksConfig,
        policy: UrlPolicy,
        catalog: dict[str, str | None],
    ):
        self.repo = repo
        self.workspaces = workspaces
        self.config = config
        self.policy = policy
        self.catalog = catalog

    # -- who may, and what ------------------------------------------------------------------

    def _manager(self, caller: auth.Caller, slug: str) -> None:
        """401/403 unless a manager of ``slug`` (or the operator); 404 for an unknown workspace."""
        self.workspaces.require_manager(caller, slug)

    def _url(self, url: str) -> str:
        try:
            self.policy.check(url)
        except UrlRefused as ex:
            raise BadRequest(f"field 'url' {ex}") from None
        return url

    def _events(self, events: list[str]) -> list[str]:
        events = list(dict.fromkeys(events))
        unknown = [e for e in events if e not in self.catalog]
        if unknown:
            raise BadRequest(
                f"field 'events' has unknown event type(s): {', '.join(unknown)}; "
                f"known: {', '.join(self.catalog)}"
            )
        return events

    def _endpoint(self, slug: str, endpoint_id: str) -> dict:
        doc = self.repo.find_endpoint(slug, object_id(endpoint_id, "webhook"))
        if doc is None:
            raise NotFound(f"webhook {endpoint_id!r} not found")
        return doc

    def _enabled(self, slug: str, endpoint_id: str) -> dict:
        endpoint = self._endpoint(slug, endpoint_id)
        if endpoint["disabled"]:
            raise Conflict("the webhook is disabled; enable it first (PATCH with disabled: false)")
        return endpoint

    def _delivery(self, endpoint: dict, delivery_id: str) -> dict:
        doc = self.repo.find_delivery(endpoint["_id"], object_id(delivery_id, "delivery"))
        if doc is None:
            raise NotFound(f"delivery {delivery_id!r} not found")
        return doc

    # -- endpoints --------------------------------------------------------------------------

    def list(self, caller: auth.Caller, slug: str) -> dict:
        self._manager(caller, slug)
        return {"items": [shapes.webhook(d) for d in self.repo.endpoints_of(slug)]}

    def create(self, caller: auth.Caller, slug: str, body) -> dict:
        self._manager(caller, slug)
        fields = check(body, schemas.CREATE_WEBHOOK)
        events = self._events(fields.get("events") or [])
        url = self._url(fields["url"])
        if self.repo.count_endpoints(slug) >= self.config.max_endpoints:
            raise Conflict(f"a workspace may have at most {self.config.max_endpoints} webhook endpoints")
        created = now()
        doc = self.repo.new_endpoint(
            workspace=slug,
            url=url,
            events=events,
            disabled=False,
            secrets=[{"key": new_secret(), "createdAt": created, "expiresAt": None}],
            createdAt=created,
            updatedAt=created,
        )
        self.repo.insert_endpoint(doc)
        return shapes.webhook_with_secret(doc)

    def event_types(self, caller: auth.Caller, slug: str) -> dict:
        """The event catalog an endpoint may subscribe to (``events``), in the plugins' order."""
        self._manager(caller, slug)
        return {"items": [{"type": t} for t in self.catalog]}

    def get(self, caller: auth.Caller, slug: str, endpoint_id: str) -> dict:
        self._manager(caller, slug)
        return shapes.webhook(self._endpoint(slug, endpoint_id))

    def update(self, caller: auth.Caller, slug: str, endpoint_id: str, body) -> dict:
        self._manager(caller, slug)
        fields = check(body, schemas.UPDATE_WEBHOOK)
        current = self._endpoint(slug, endpoint_id)
        change: dict = {}
        if "url" in fields:
            change["url"] = self._url(fields["url"])
        if "events" in fields:
            change["events"] = self._events(fields["events"])
        if fields.get("disabled") is True and not current["disabled"]:
            doc = self.disable(current["_id"], contract.DISABLED_MANUALLY, change) or self._endpoint(slug, endpoint_id)
            return shapes.webhook(doc)
        if fields.get("disabled") is False and current["disabled"]:
            change.update(disabled=False, disabledReason=None, disabledAt=None, failingSince=None)
        if not change:
            return shapes.webhook(current)
        change["updatedAt"] = now()
        doc = self.repo.change_endpoint(current["_id"], change)
        if doc is None:
            raise NotFound(f"webhook {endpoint_id!r} not found")
        return shapes.webhook(doc)

    def delete(self, caller: auth.Caller, slug: str, endpoint_id: str) -> dict:
        """Delete the endpoint and its delivery log; the deleted endpoint."""
        self._manager(caller, slug)
        doc = self._endpoint(slug, endpoint_id)
        self.repo.delete_endpoint(doc["_id"])
        return shapes.webhook(doc)

    def rotate(self, caller: auth.Caller, slug: str, endpoint_id: str) -> dict:
        """A new current secret; the ones before it keep signing for the rotation window."""
        self._manager(caller, slug)
        current = self._endpoint(slug, endpoint_id)
        at = now()
        expires = at + timedelta(seconds=self.config.rotation_window)
        kept = [
            {**s, "expiresAt": s.get("expiresAt") or expires}
            for s in current.get("secrets", [])
            if s.get("expiresAt") is None or s["expiresAt"] > at
        ]
        secrets = [{"key": new_secret(), "createdAt": at, "expiresAt": None}, *kept]
        doc = self.repo.change_endpoint(current["_id"], {"secrets": secrets, "updatedAt": at})
        if doc is None:
            raise NotFound(f"webhook {endpoint_id!r} not found")
        return shapes.webhook_with_secret(doc, rotated=True)

    # -- deliveries -------------------------------------------------------------------------

    def ping(self, caller: auth.Caller, slug: str, endpoint_id: str) -> dict:
        """A ``webhook.test`` delivery for this endpoint only (whatever its ``events``), due
        now: any dispatcher sends it, without Kafka."""
        self._manager(caller, slug)
        endpoint = self._enabled(slug, endpoint_id)
        data = {"webhookId": str(endpoint["_id"]), "message": TEST_MESSAGE}
        body = payload(contract.WEBHOOK_TEST, iso(now()), data)
        doc = self.repo.new_delivery(endpoint, uuid.uuid4().hex, body, now(), None)
        self.repo.insert_delivery(doc)
        return shapes.delivery(doc, with_payload=True)

    def deliveries(self, caller: auth.Caller, slug: str, endpoint_id: str, status: str | None, limit: int, offset: int) -> dict:
        """The delivery log, newest first."""
        self._manager(caller, slug)
        endpoint = self._endpoint(slug, endpoint_id)
        return {"items": [shapes.delivery(d) for d in self.repo.delivery_page(endpoint["_id"], status, limit, offset)]}

    def delivery(self, caller: auth.Caller, slug: str, endpoint_id: str, delivery_id: str) -> dict:
        self._manager(caller, slug)
        endpoint = self._endpoint(slug, endpoint_id)
        return shapes.delivery(self._delivery(endpoint, delivery_id), with_payload=True)

    def resend(self, caller: auth.Caller, slug: str, endpoint_id: str, delivery_id: str) -> dict:
        """Queue a finished delivery again (same webhook-id), with a fresh retry schedule."""
        self._manager(caller, slug)
        endpoint = self._enabled(slug, endpoint_id)
        doc = self._delivery(endpoint, delivery_id)
        if doc["status"] == contract.PENDING:
            raise Conflict(f"delivery {delivery_id!r} is still pending; its next attempt is at {iso(doc['nextAttemptAt'])}")
        if not self.repo.requeue(doc["_id"], doc["status"], doc.get("attemptCount", 0)):
            raise Conflict(f"delivery {delivery_id!r} changed meanwhile; retry")
        return shapes.delivery(self._delivery(endpoint, delivery_id), with_payload=True)

    # -- what attempts' outcomes change (the sender reports them) ----------------------------

    def disable(self, endpoint_id: ObjectId, reason: str, change: dict | None = None) -> dict | None:
        """Disable the endpoint (with ``change`` besides) and publish ``webhook.disabled``, in
        one transaction; the disabled endpoint, or None if it already was disabled or is gone."""
        at = now()
        fields = {**(change or {}), "disabled": True, "disabledReason": reason, "disabledAt": at, "updatedAt": at}

        def work(tx: WebhookRepository) -> dict | None:
            doc = tx.endpoint(endpoint_id)
            if doc is None or doc["disabled"]:
                return None
            doc = {**doc, **fields}
            tx.add(tx.disable_endpoint(endpoint_id, fields), tx.event(doc["workspace"], contract.WEBHOOK_DISABLED, shapes.webhook(doc)))
            if tx.flush()[0] != 1:
                raise NotDisabled()  # disabled meanwhile: the event is undone with the transaction
            return doc

        try:
            return self.repo.unit_of_work(work)
        except NotDisabled:
            return None

    def attempts_ended(self, endpoint: dict, gone: bool, ok: bool, at: datetime) -> None:
        """What the newest outcome of a batch of attempts to ``endpoint`` means for it: a 410
        disables it at once; a success ends its failing span; a failure starts the span, or
        disables the endpoint once the span has lasted WEBHOOK_DISABLE_AFTER_SECONDS."""
        if gone:
            self.disable(endpoint["_id"], contract.DISABLED_GONE)
        elif ok:
            if endpoint.get("failingSince") is not None:
                self.repo.clear_failing(endpoint["_id"])
        else:
            since = endpoint.get("failingSince")
            if since is None:
                self.repo.start_failing(endpoint["_id"], at)
            elif (at - _aware(since)).total_seconds() >= self.config.disable_after:
                self.disable(endpoint["_id"], contract.DISABLED_FAILING)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
