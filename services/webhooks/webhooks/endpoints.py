"""Webhook endpoints: registration, changes, secret rotation, and the state the sender moves
(failing since, disabled). Resources validate input and call these methods.

Disabling an endpoint, by a manager or by the sender, writes ``webhook.disabled`` to the
outbox in the same transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bson import ObjectId
from pymongo import ReturnDocument

from common.errors import BadRequest, Conflict, NotFound
from common.events import Outbox
from common.ids import now, object_id
from webhooks import contract, shapes
from webhooks.config import WebhookSettings
from webhooks.models import Delivery, Endpoint
from webhooks.signing import new_secret
from webhooks.urlguard import UrlPolicy, UrlRefused


def active_keys(endpoint: dict, at: datetime) -> list[str]:
    """The secrets that sign at ``at``: the current one and those still in their rotation window."""
    return [s["key"] for s in endpoint.get("secrets", []) if s.get("expiresAt") is None or s["expiresAt"] > at]


def subscribes(endpoint: dict, type_: str, happened_at: datetime) -> bool:
    """Whether the endpoint takes this event: its type is subscribed, and the endpoint existed
    when it happened (so a new endpoint is not flooded with events replayed from Kafka)."""
    wanted = not endpoint.get("events") or type_ in endpoint["events"]
    return wanted and _aware(endpoint["createdAt"]) <= happened_at


class EndpointService:
    def __init__(self, store, settings: WebhookSettings, policy: UrlPolicy, catalog: dict[str, str | None]):
        self.store = store
        self.catalog = catalog
        self.settings = settings
        self.policy = policy
        self.outbox = Outbox(store.db, contract.TOPIC)
        self.endpoints = Endpoint._get_collection()
        self.deliveries = Delivery._get_collection()

    # -- validation ------------------------------------------------------------------

    def checked_url(self, url: str) -> str:
        try:
            self.policy.check(url)
        except UrlRefused as ex:
            raise BadRequest(f"field 'url' {ex}") from None
        return url

    def checked_events(self, events: list[str]) -> list[str]:
        events = list(dict.fromkeys(events))
        unknown = [e for e in events if e not in self.catalog]
        if unknown:
            raise BadRequest(
                f"field 'events' has unknown event type(s): {', '.join(unknown)}; "
                f"known: {', '.join(self.catalog)}"
            )
        return events

    # -- the API ---------------------------------------------------------------------

    def create(self, slug: str, url: str, events: list[str]) -> dict:
        events = self.checked_events(events)
        url = self.checked_url(url)
        # NOTE: a count, not on a hot path; a workspace has at most max_endpoints of them.
        if self.endpoints.count_documents({"workspace": slug}) >= self.settings.max_endpoints:
            raise Conflict(f"a workspace may have at most {self.settings.max_endpoints} webhook endpoints")
        created = now()
        doc = {
            "_id": ObjectId(),
            "workspace": slug,
            "url": url,
            "events": events,
            "disabled": False,
            "disabledReason": None,
            "disabledAt": None,
            "secrets": [{"key": new_secret(), "createdAt": created, "expiresAt": None}],
            "failingSince": None,
            "createdAt": created,
            "updatedAt": created,
        }
        self.endpoints.insert_one(doc)
        return doc

    def list(self, slug: str) -> list[dict]:
        return list(self.endpoints.find({"workspace": slug}, sort=[("createdAt", 1), ("_id", 1)]))

    def get(self, slug: str, endpoint_id: str) -> dict:
        doc = self.endpoints.find_one({"_id": object_id(endpoint_id, "webhook"), "workspace": slug})
        if doc is None:
            raise NotFound(f"webhook {endpoint_id!r} not found")
        return doc

    def update(self, slug: str, endpoint_id: str, fields: dict) -> dict:
        current = self.get(slug, endpoint_id)
        change: dict = {}
        if "url" in fields:
            change["url"] = self.checked_url(fields["url"])
        if "events" in fields:
            change["events"] = self.checked_events(fields["events"])
        if fields.get("disabled") is True and not current["disabled"]:
            return self.disable(current["_id"], contract.DISABLED_MANUALLY, change) or self.get(slug, endpoint_id)
        if fields.get("disabled") is False and current["disabled"]:
            change.update(disabled=False, disabledReason=None, disabledAt=None, failingSince=None)
        if not change:
            return current
        change["updatedAt"] = now()
        doc = self.endpoints.find_one_and_update(
            {"_id": current["_id"]}, {"$set": change}, return_document=ReturnDocument.AFTER
        )
        if doc is None:
            raise NotFound(f"webhook {endpoint_id!r} not found")
        return doc

    def delete(self, slug: str, endpoint_id: str) -> dict:
        doc = self.get(slug, endpoint_id)
        self.endpoints.delete_one({"_id": doc["_id"]})
        # An attempt already under way finishes; its result then updates nothing.
        self.deliveries.delete_many({"endpointId": doc["_id"]})
        return doc

    def rotate(self, slug: str, endpoint_id: str) -> dict:
        """A new current secret; the ones before it keep signing for the rotation window."""
        current = self.get(slug, endpoint_id)
        at = now()
        expires = at + timedelta(seconds=self.settings.rotation_window)
        kept = [
            {**s, "expiresAt": s.get("expiresAt") or expires}
            for s in current.get("secrets", [])
            if s.get("expiresAt") is None or s["expiresAt"] > at
        ]
        secrets = [{"key": new_secret(), "createdAt": at, "expiresAt": None}, *kept]
        doc = self.endpoints.find_one_and_update(
            {"_id": current["_id"]}, {"$set": {"secrets": secrets, "updatedAt": at}}, return_document=ReturnDocument.AFTER
        )
        if doc is None:
            raise NotFound(f"webhook {endpoint_id!r} not found")
        return doc

    # -- what the dispatcher uses -------------------------------------------------------

    def enabled_in(self, workspaces: list[str]) -> dict[str, list[dict]]:
        """The enabled endpoints of these workspaces, by workspace (one query)."""
        found: dict[str, list[dict]] = {}
        for e in self.endpoints.find({"workspace": {"$in": workspaces}, "disabled": False}):
            found.setdefault(e["workspace"], []).append(e)
        return found

    def by_ids(self, ids: list[ObjectId]) -> dict[ObjectId, dict]:
        return {e["_id"]: e for e in self.endpoints.find({"_id": {"$in": list(set(ids))}})}

    def mark_failing(self, endpoint: dict, at: datetime) -> None:
        """Start the failing span, or disable the endpoint once it has lasted too long."""
        since = endpoint.get("failingSince")
        if since is None:
            self.endpoints.update_one({"_id": endpoint["_id"], "failingSince": None}, {"$set": {"failingSince": at}})
        elif (at - _aware(since)).total_seconds() >= self.settings.disable_after:
            self.disable(endpoint["_id"], contract.DISABLED_FAILING)

    def mark_healthy(self, endpoint: dict) -> None:
        if endpoint.get("failingSince") is not None:
            self.endpoints.update_one({"_id": endpoint["_id"]}, {"$set": {"failingSince": None}})

    def disable(self, endpoint_id: ObjectId, reason: str, change: dict | None = None) -> dict | None:
        """Disable once and publish ``webhook.disabled``; None if it already was disabled."""
        at = now()

        def work(session):
            doc = self.endpoints.find_one_and_update(
                {"_id": endpoint_id, "disabled": False},
                {"$set": {**(change or {}), "disabled": True, "disabledReason": reason, "disabledAt": at, "updatedAt": at}},
                return_document=ReturnDocument.AFTER,
                session=session,
            )
            if doc is not None:
                self.outbox.add(session, contract.WEBHOOK_DISABLED, doc["workspace"], shapes.webhook(doc))
            return doc

        return self.store.transaction(work)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
