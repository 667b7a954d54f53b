"""Deliveries: due-time records of (event, endpoint), claimed under a lease and updated with
each attempt's outcome.

A dispatcher claims a due delivery by pushing its ``nextAttemptAt`` forward by the lease and
stamping its ``claim`` token, in one conditional update per document, so two dispatchers
never both win the same attempt. Results are written only where the token still matches.
If the dispatcher dies, the due time passes and any live dispatcher takes the delivery over.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from bson import ObjectId
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError

from common.errors import Conflict, NotFound
from common.ids import iso, now, object_id
from webhooks import contract
from webhooks.models import Delivery
from webhooks.signing import message_id, payload

DUPLICATE_KEY = 11000


def new_delivery(endpoint: dict, event_id: str, body: dict, due: datetime, claim: str | None) -> dict:
    return {
        "_id": ObjectId(),
        "workspace": endpoint["workspace"],
        "endpointId": endpoint["_id"],
        "eventId": event_id,
        "messageId": message_id(event_id),
        "type": body["type"],
        "payload": body,
        "status": contract.PENDING,
        "nextAttemptAt": due,
        "claim": claim,
        "attemptCount": 0,
        "scheduleStart": 0,
        "attempts": [],
        "lastAttemptAt": None,
        "createdAt": now(),
    }


class DeliveryStore:
    def __init__(self):
        self.deliveries = Delivery._get_collection()

    # -- recording -------------------------------------------------------------------

    def record(self, pairs: list[tuple[dict, dict]], token: str, leases: list[float]) -> list[dict]:
        """Store one delivery per (event, endpoint) pair in one write, each leased to ``token``
        for its number of seconds (the caller attempts them). Returns the new ones: a
        replayed event adds nothing."""
        if not pairs:
            return []
        at = now()
        docs = []
        for (event, endpoint), lease in zip(pairs, leases):
            body = payload(event["type"], event["timestamp"], event.get("data") or {})
            docs.append(new_delivery(endpoint, event["id"], body, at + timedelta(seconds=lease), token))
        try:
            self.deliveries.insert_many(docs, ordered=False)
            duplicates = set()
        except BulkWriteError as ex:
            errors = ex.details.get("writeErrors", [])
            if any(e.get("code") != DUPLICATE_KEY for e in errors):
                raise
            duplicates = {e["index"] for e in errors}
        return [d for i, d in enumerate(docs) if i not in duplicates]

    def ping(self, endpoint: dict) -> dict:
        """A ``webhook.test`` delivery for one endpoint, due now."""
        event_id = uuid.uuid4().hex
        body = payload(
            contract.WEBHOOK_TEST,
            iso(now()),
            {"webhookId": str(endpoint["_id"]), "message": "This is a test event from your feedback workspace."},
        )
        doc = new_delivery(endpoint, event_id, body, now(), None)
        self.deliveries.insert_one(doc)
        return doc

    # -- claiming and results ------------------------------------------------------------

    def claim_due(self, limit: int, token: str, lease: float) -> list[dict]:
        """Lease up to ``limit`` due deliveries to ``token``; return those this call won."""
        at = now()
        due = {"status": contract.PENDING, "nextAttemptAt": {"$lte": at}}
        # NOTE: SecantusDB sorts in memory and does not stop at the limit, so this costs in
        # proportion to the due deliveries; dispatchers keep that set small by leasing what
        # they record to themselves. Real MongoDB walks the index and stops at the limit.
        ids = [d["_id"] for d in self.deliveries.find(due, projection={"_id": 1}, sort=[("nextAttemptAt", 1)], limit=limit)]
        if not ids:
            return []
        self.deliveries.update_many(
            {"_id": {"$in": ids}, **due}, {"$set": {"nextAttemptAt": at + timedelta(seconds=lease), "claim": token}}
        )
        return list(self.deliveries.find({"_id": {"$in": ids}, "claim": token, "status": contract.PENDING}))

    def renew(self, delivery_id: ObjectId, token: str, lease: float) -> bool:
        """Extend a lease this token still holds; False if another dispatcher took it over."""
        result = self.deliveries.update_one(
            {"_id": delivery_id, "claim": token, "status": contract.PENDING},
            {"$set": {"nextAttemptAt": now() + timedelta(seconds=lease)}},
        )
        return result.modified_count == 1

    def release(self, ids: list[ObjectId], token: str) -> None:
        """Give leased deliveries back: due now, for any dispatcher."""
        if ids:
            self.deliveries.update_many(
                {"_id": {"$in": ids}, "claim": token, "status": contract.PENDING},
                {"$set": {"nextAttemptAt": now(), "claim": None}},
            )

    def apply(self, updates: list[UpdateOne]) -> None:
        if updates:
            self.deliveries.bulk_write(updates, ordered=False)

    # -- the delivery log ----------------------------------------------------------------

    def list(self, endpoint_id: ObjectId, status: str | None, limit: int, offset: int) -> list[dict]:
        query = {"endpointId": endpoint_id, **({"status": status} if status else {})}
        return list(self.deliveries.find(query, sort=[("createdAt", -1), ("_id", -1)], skip=offset, limit=limit))

    def get(self, endpoint_id: ObjectId, delivery_id: str) -> dict:
        doc = self.deliveries.find_one({"_id": object_id(delivery_id, "delivery"), "endpointId": endpoint_id})
        if doc is None:
            raise NotFound(f"delivery {delivery_id!r} not found")
        return doc

    def resend(self, endpoint_id: ObjectId, delivery_id: str) -> dict:
        """Queue a finished delivery again (same webhook-id), with a fresh retry schedule."""
        doc = self.get(endpoint_id, delivery_id)
        if doc["status"] == contract.PENDING:
            raise Conflict(f"delivery {delivery_id!r} is still pending; its next attempt is at {iso(doc['nextAttemptAt'])}")
        result = self.deliveries.update_one(
            {"_id": doc["_id"], "status": doc["status"]},
            {"$set": {
                "status": contract.PENDING, "nextAttemptAt": now(), "claim": None, "scheduleStart": doc.get("attemptCount", 0),
            }},
        )
        if result.modified_count != 1:
            raise Conflict(f"delivery {delivery_id!r} changed meanwhile; retry")
        return self.get(endpoint_id, delivery_id)
