"""Request bodies the webhooks service accepts (JSON Schema, strict).

Event names and URLs get their own checks in :mod:`webhooks.service`, so the messages can
list the known event types and say why a URL is refused.
"""

from common.validation import BOOLEAN, obj, string

MAX_URL = 2000
EVENTS = {"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 100}

CREATE_WEBHOOK = obj({"url": string(MAX_URL, 1), "events": EVENTS}, required=("url",))
UPDATE_WEBHOOK = obj({"url": string(MAX_URL, 1), "events": EVENTS, "disabled": BOOLEAN})
