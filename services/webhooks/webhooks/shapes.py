"""Response shapes: ``Webhook``, ``WebhookWithSecret`` and ``Delivery`` of the OpenAPI document
(this service's part: ``webhooks/openapi.yaml``). The endpoint carries the state a manager
needs (``disabled``, ``disabledReason``, times); the secret appears only in the creation and
rotation responses."""

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


def webhook_with_secret(doc: dict) -> dict:
    return {**webhook(doc), "secret": doc["secrets"][0]["key"]}


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
