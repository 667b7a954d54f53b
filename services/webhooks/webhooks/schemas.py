"""Request bodies and query parameters the webhooks service accepts (JSON Schema, strict).

These are the schemas the OpenAPI document shows: ``openapi.yaml`` names each with
``x-schema`` and the gateway puts it in. Two rules are checked in :mod:`webhooks.service`
beyond them, so their messages can say what is wrong; the document shows both beside the body
schema (``allOf``): event types come from the catalog the plugins declare (``WebhookEventType``),
and a URL has the form ``URL`` (:mod:`webhooks.urlguard` reads it; the conformance test checks
that the two agree). Where a URL's host resolves, and its port, no schema can say.
"""

from common.validation import BOOLEAN, VISIBLE, choice, integer, obj, string
from webhooks import contract

MAX_URL = 2000
# An absolute https URL as the URL guard reads it: the scheme in any case, an ASCII host (a name
# or an IPv4 address; no credentials), a port up to 65535, then anything without spaces. (http
# too where WEBHOOK_ALLOW_HTTP is set: a development setting the document does not show.)
_HOST = r"[A-Za-z0-9._~%!$&'()*+,;=-]+"
_PORT = r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?"
URL = string(
    MAX_URL,
    1,
    pattern=rf"^[Hh][Tt][Tt][Pp][Ss]://{_HOST}{_PORT}(?:[/?#]{VISIBLE}*)?$",
    description=(
        "absolute https URL (http too where WEBHOOK_ALLOW_HTTP is set) whose host resolves only to "
        "public addresses, on port 80, 443 or 1024-65535 outside internal services' ports, unless "
        "WEBHOOK_ALLOWED_HOSTS lets it through; a URL refused for where it leads is a 400"
    ),
)
EVENTS = {
    "type": "array",
    "items": {"type": "string", "maxLength": 100},
    "maxItems": 100,
    "description": "event types to receive (WebhookEventType); absent or empty means all",
}

CREATE_WEBHOOK = obj({"url": string(MAX_URL, 1), "events": EVENTS}, required=("url",))
UPDATE_WEBHOOK = obj({"url": string(MAX_URL, 1), "events": EVENTS, "disabled": BOOLEAN})

# -- query parameters ---------------------------------------------------------------------

DELIVERY_STATUS = choice(contract.DELIVERY_STATES)
DELIVERIES_LIMIT = integer(1, contract.DELIVERIES_LIMIT[1], contract.DELIVERIES_LIMIT[0])
