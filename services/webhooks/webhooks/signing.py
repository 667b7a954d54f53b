"""Secrets and the Standard Webhooks message: body, ``webhook-*`` headers and signatures."""

from __future__ import annotations

import base64
import json
import secrets
from datetime import datetime

from standardwebhooks import Webhook

from webhooks.contract import SECRET_BYTES, SECRET_PREFIX


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def active_keys(endpoint: dict, at: datetime) -> list[str]:
    """The secrets that sign at ``at``: the current one and those still in their rotation window."""
    return [s["key"] for s in endpoint.get("secrets", []) if s.get("expiresAt") is None or s["expiresAt"] > at]


def payload(type_: str, timestamp: str, data: dict) -> dict:
    """The delivery body (Standard Webhooks payload structure)."""
    return {"type": type_, "timestamp": timestamp, "data": data}


def message_id(event_id: str) -> str:
    """The webhook-id of an event: one id per event, the same on every attempt and endpoint."""
    return f"msg_{event_id}"


def body_bytes(body: dict) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def signed_headers(msg_id: str, sent_at: datetime, body: bytes, keys: list[str]) -> dict[str, str]:
    """The three headers; one ``v1,`` signature per active secret, space-separated."""
    text = body.decode()
    signatures = " ".join(Webhook(key).sign(msg_id, sent_at, text) for key in keys)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": signatures,
    }
