"""Response shapes: ``Webhook``, ``WebhookWithSecret`` and ``Delivery`` of the OpenAPI document
(this service's part: ``webhooks/openapi.yaml``). The endpoint carries the state a manager
needs (``disabled``, ``disabledReason``, times); the secret appears only in the creation and
rotation responses, never kept for an ``Idempotency-Key`` retry (:class:`ShownOnce`)."""

from common.idempotency import ShownOnce
from common.ids import iso


def webhook(doc: dict) -> dict:
    return {
        "id": str(doc["_id"]),
        "url": doc["url"],
        "events": list(doc.get("events", [])),
        "disabled": bool(doc.get("disabled")),
        "disabledReason": doc.get("disabledReason"),
        "createdAt": iso(doc["createdAt"]),
        "updatedAt": iso(doc.get("updatedAt") or doc["createdAt"]),
    }


def webhook_with_secret(doc: dict, rotated: bool = False) -> ShownOnce:
    hook = webhook(doc)
    rotate = f"POST /v1/workspaces/{doc['workspace']}/webhooks/{hook['id']}/rotate-secret"
    done = f"the signing secret of webhook '{hook['id']}' was rotated" if rotated else f"webhook '{hook['id']}' was created"
    return ShownOnce(
        {**hook, "secret": doc["secrets"][0]["key"]},
        f"{done}; its new signing secret is shown only once: if the answer was lost, get another with {rotate}",
    )


def attempt(doc: dict) -> dict:
    return {
        "at": iso(doc["at"]),
        "statusCode": doc.get("statusCode"),
        "error": doc.get("error"),
        "durationMs": doc.get("durationMs", 0),
    }


def delivery(doc: dict, with_payload: bool = False) -> dict:
    shape = {
        "id": str(doc["_id"]),
        "webhookId": str(doc["endpointId"]),
        "messageId": doc["messageId"],
        "eventId": doc["eventId"],
        "type": doc["type"],
        "status": doc["status"],
        "attemptCount": doc.get("attemptCount", 0),
        "attempts": [attempt(a) for a in doc.get("attempts", [])],
        "nextAttemptAt": iso(doc.get("nextAttemptAt")) if doc["status"] == "pending" else None,
        "lastAttemptAt": iso(doc.get("lastAttemptAt")),
        "createdAt": iso(doc["createdAt"]),
    }
    if with_payload:
        shape["payload"] = doc["payload"]
    return shape
