"""Every database command and outbox write of the webhooks service.

The service layer and the delivery pipeline (recorder, sender) decide; this module knows
where endpoints and deliveries are stored and how to change them safely while several
dispatcher processes race for the same work.

Claims: a dispatcher claims a due delivery by pushing its ``nextAttemptAt`` forward by the
lease and stamping its ``claim`` token, in one conditional update per document, so two
dispatchers never both win the same attempt. Outcomes are written only where the token still
matches. If the dispatcher dies, the due time passes and any live dispatcher takes the
delivery over.

Signing secrets are stored sealed (:mod:`common.secretbox`): every endpoint this module
writes has its ``secrets[].key`` sealed, and every endpoint it returns has them opened, so
the rules and the sender see the secrets they sign with and the database never holds one.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bson import ObjectId
from common.db import Store, Update, insert_new, new_document
from common.ids import now
from common.repository import Repository
from common.secretbox import SecretBox, default_box
from pymongo import ReturnDocument, UpdateOne

from webhooks import contract
from webhooks.models import Delivery, Endpoint
from webhooks.signing import message_id


class WebhookRepository(Repository):
    def __init__(self, store: Store, box: SecretBox | None = None):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.box = box or default_box()
        self.endpoints = store.collection(Endpoint)
        self.deliveries = store.collection(Delivery)

    # -- sealed secrets ---------------------------------------------------------------------

    def _sealed(self, secrets: list[dict]) -> list[dict]:
        return [{**s, "key": self.box.seal(s["key"])} for s in secrets]

    def _opened(self, doc: dict | None) -> dict | None:
        if doc is None or "secrets" not in doc:
            return doc
        return {**doc, "secrets": [{**s, "key": self.box.open(s["key"])} for s in doc["secrets"]]}

    # -- endpoints --------------------------------------------------------------------------

    @staticmethod
    def new_endpoint(**fields) -> dict:
        return new_document(Endpoint, id=ObjectId(), **fields)

    def count_endpoints(self, slug: str) -> int:
        # A count, not on a hot path: a workspace has at most WEBHOOK_MAX_ENDPOINTS of them.
        return self.endpoints.count_documents({"workspace": slug})

    def insert_endpoint(self, doc: dict) -> None:
        self.endpoints.insert_one({**doc, "secrets": self._sealed(doc.get("secrets", []))})

    def endpoints_of(self, slug: str) -> list[dict]:
        return [self._opened(e) for e in self.endpoints.find({"workspace": slug}, sort=[("createdAt", 1), ("_id", 1)])]

    def find_endpoint(self, slug: str, oid: ObjectId) -> dict | None:
        return self._opened(self.endpoints.find_one({"_id": oid, "workspace": slug}))

    def endpoint(self, oid: ObjectId) -> dict | None:
        return self._opened(self.endpoints.find_one({"_id": oid}, session=self.session))

    def change_endpoint(self, oid: ObjectId, fields: dict) -> dict | None:
        """Set ``fields`` (secrets in clear); the endpoint as changed, or None if it is gone."""
        if "secrets" in fields:
            fields = {**fields, "secrets": self._sealed(fields["secrets"])}
        return self._opened(self.endpoints.find_one_and_update({"_id": oid}, {"$set": fields}, return_document=ReturnDocument.AFTER))

    def disable_endpoint(self, oid: ObjectId, fields: dict) -> Update:
        """The write that disables an endpoint the same transaction read as enabled."""
        return Update(self.endpoints, {"_id": oid, "disabled": False}, {"$set": fields})

    def delete_endpoint(self, oid: ObjectId) -> None:
        """Delete the endpoint and its delivery log."""
        self.endpoints.delete_one({"_id": oid})
        # An attempt already under way finishes; its outcome then updates nothing.
        self.deliveries.delete_many({"endpointId": oid})

    def enabled_in(self, workspaces: list[str]) -> dict[str, list[dict]]:
        """The enabled endpoints of these workspaces, by workspace (one query)."""
        found: dict[str, list[dict]] = {}
        for e in self.endpoints.find({"workspace": {"$in": workspaces}, "disabled": False}):
            found.setdefault(e["workspace"], []).append(self._opened(e))
        return found

    def endpoints_by_id(self, ids: list[ObjectId]) -> dict[ObjectId, dict]:
        return {e["_id"]: self._opened(e) for e in self.endpoints.find({"_id": {"$in": list(set(ids))}})}

    def start_failing(self, oid: ObjectId, at: datetime) -> None:
        """Start the endpoint's failing span, unless another outcome started it already."""
        self.endpoints.update_one({"_id": oid, "failingSince": None}, {"$set": {"failingSince": at}})

    def clear_failing(self, oid: ObjectId) -> None:
        self.endpoints.update_one({"_id": oid}, {"$set": {"failingSince": None}})

    # -- deliveries: recording --------------------------------------------------------------

    @staticmethod
    def new_delivery(endpoint: dict, event_id: str, body: dict, due: datetime, claim: str | None) -> dict:
        """A new delivery of ``body`` (the event's payload) to ``endpoint``, due at ``due``
        and leased to ``claim`` (None: free for any dispatcher)."""
        return new_document(
            Delivery,
            id=ObjectId(),
            workspace=endpoint["workspace"],
            endpointId=endpoint["_id"],
            eventId=event_id,
            messageId=message_id(event_id),
            type=body["type"],
            payload=body,
            status=contract.PENDING,
            nextAttemptAt=due,
            claim=claim,
            createdAt=now(),
        )

    def insert_delivery(self, doc: dict) -> None:
        self.deliveries.insert_one(doc)

    def insert_deliveries(self, docs: list[dict]) -> list[dict]:
        """Store the deliveries in one write; return the new ones. The (endpoint, event) pair
        is unique, so a delivery recorded before (a replayed event) is skipped, not an error."""
        return [docs[i] for i in insert_new(self.deliveries, docs)]

    # -- deliveries: claims, leases and outcomes --------------------------------------------

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
        # The update repeats the due condition: of two dispatchers that found the same ids,
        # the second matches only what the first left unclaimed.
        self.deliveries.update_many(
            {"_id": {"$in": ids}, **due}, {"$set": {"nextAttemptAt": at + timedelta(seconds=lease), "claim": token}}
        )
        return list(self.deliveries.find({"_id": {"$in": ids}, "claim": token, "status": contract.PENDING}))

    def next_due(self):
        """When the earliest pending delivery is due (a retry, or a lease that runs out), or None."""
        first = self.deliveries.find_one({"status": contract.PENDING}, projection={"nextAttemptAt": 1},
                                         sort=[("nextAttemptAt", 1)])
        return first["nextAttemptAt"] if first else None

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

    def defer(self, ids: list[ObjectId], token: str, seconds: float) -> None:
        """Give leased deliveries back, due again in ``seconds`` (their endpoint is busy)."""
        if ids:
            self.deliveries.update_many(
                {"_id": {"$in": ids}, "claim": token, "status": contract.PENDING},
                {"$set": {"nextAttemptAt": now() + timedelta(seconds=seconds), "claim": None}},
            )

    def outcome(self, delivery_id: ObjectId, token: str, state: dict, attempt: dict) -> UpdateOne:
        """The write of an attempt's outcome (``state``: the fields it sets), applied only while
        ``token`` still holds the lease; the attempt log keeps the last ATTEMPT_LOG_SIZE."""
        return UpdateOne(
            {"_id": delivery_id, "claim": token},
            {
                "$set": {**state, "claim": None},
                "$inc": {"attemptCount": 1},
                "$push": {"attempts": {"$each": [attempt], "$slice": -contract.ATTEMPT_LOG_SIZE}},
            },
        )

    def cancellation(self, delivery_id: ObjectId, token: str) -> UpdateOne:
        """The write that cancels a leased delivery (its endpoint is disabled or gone)."""
        return UpdateOne(
            {"_id": delivery_id, "claim": token},
            {"$set": {"status": contract.CANCELLED, "nextAttemptAt": None, "claim": None}},
        )

    def apply(self, updates: list[UpdateOne]) -> None:
        """Outcomes and cancellations, in one bulk write."""
        if updates:
            self.deliveries.bulk_write(updates, ordered=False)

    # -- the delivery log -------------------------------------------------------------------

    def delivery_page(self, endpoint_id: ObjectId, status: str | None, limit: int, offset: int) -> list[dict]:
        query = {"endpointId": endpoint_id, **({"status": status} if status else {})}
        return list(self.deliveries.find(query, sort=[("createdAt", -1), ("_id", -1)], skip=offset, limit=limit))

    def find_delivery(self, endpoint_id: ObjectId, oid: ObjectId) -> dict | None:
        return self.deliveries.find_one({"_id": oid, "endpointId": endpoint_id})

    def requeue(self, oid: ObjectId, status: str, schedule_start: int) -> bool:
        """Make a finished delivery due now again with a fresh schedule, if it is still in
        ``status``; False if it changed meanwhile."""
        result = self.deliveries.update_one(
            {"_id": oid, "status": status},
            {"$set": {"status": contract.PENDING, "nextAttemptAt": now(), "claim": None, "scheduleStart": schedule_start}},
        )
        return result.modified_count == 1
