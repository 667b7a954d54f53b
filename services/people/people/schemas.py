"""Request bodies the people service accepts (JSON Schema, strict)."""

from common import i18n
from common.validation import array, choice, integer, obj, string
from people.contract import AUDIT_LIMIT, AUDIT_TYPES, METHODS, ROLES

# An address as people type it: something@something.tld, no spaces; at most RFC 5321's 254.
EMAIL = string(254, 3, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", description="an email address")
TOKEN = string(200, 16, pattern=r"^[A-Za-z0-9_-]+$")
NAME = string(100, 1, pattern=r"[^\s\x1c-\x1f]")
URL = string(2000, 1, pattern=r"^https?://")
# Where the site shows the visitor after signing in: a path of the board, nothing else (checked
# again by the service against the workspace's own paths).
NEXT = string(500, 1)
# The address the visitor's browser is on: the platform's public address, or the workspace's
# verified custom domain (checked by the service).
ORIGIN = string(300, 1, pattern=r"^https?://[^/?#]+$")

# The language of the page a mail is asked from (the translators' pseudo-locale too: a page
# shown in it asks in it); the mail is in it where the workspace enabled it (people.mail).
PAGE_LOCALE = choice((*i18n.LOCALES, i18n.PSEUDO), description="the language of the page asking: the mail is in it")
INVITE = obj({"email": EMAIL, "role": choice(ROLES), "origin": ORIGIN, "locale": PAGE_LOCALE}, required=("email", "role"))
CHANGE_ROLE = obj({"role": choice(ROLES)}, required=("role",))
REQUEST_LINK = obj({"email": EMAIL, "next": NEXT, "origin": ORIGIN, "locale": PAGE_LOCALE}, required=("email",))
REDEEM = obj({"token": TOKEN}, required=("token",))
# ``locale``: the language the person reads the platform in, everywhere (pages, the widget,
# mails; docs/languages.md); null goes back to their browser's and the workspace's.
LOCALE = {"type": ["string", "null"], "enum": [*i18n.LOCALES, None], "description": "the person's own language, or null"}
UPDATE_ME = obj({"name": NAME, "avatarUrl": {"anyOf": [URL, {"type": "null"}]}, "locale": LOCALE})
SIGN_IN_SETTINGS = obj({"endUserMethods": {**array(choice(METHODS)), "uniqueItems": True}})
AUDIT_PAGE = integer(1, AUDIT_LIMIT[1], AUDIT_LIMIT[0])
AUDIT_TYPE = choice(AUDIT_TYPES, description="only the entries of this type")
MEMBERS_PAGE = integer(1, 500, 100)
# Persons asked for at once by another service (a fan-out asks in batches of this many).
LOOKUP = obj({"ids": {**array(string(24, 24, pattern=r"^[0-9a-f]{24}$")), "maxItems": 1000}}, required=("ids",))
RESOLVE = obj({"email": EMAIL}, required=("email",))
IDENTITY = obj(
    {"workspace": {"type": ["string", "null"]}, "apiKey": {"type": ["string", "null"]},
     "userToken": {"type": ["string", "null"]}},
    required=("workspace",),
)

# -- passkeys (WebAuthn) ------------------------------------------------------------------------


def b64url(max_length: int, min_length: int = 1) -> dict:
    """Bytes as WebAuthn's JSON spells them: base64url without padding."""
    return string(max_length, min_length, pattern=r"^[A-Za-z0-9_-]*$")


CHALLENGE_ID = b64url(100, 16)


def _credential(response: dict, required: tuple[str, ...]) -> dict:
    """A credential as the browser's ``PublicKeyCredential.toJSON()`` gives it. Open to fields
    browsers add over time (``clientExtensionResults``, ``authenticatorAttachment``); the
    library checks what the ceremony needs."""
    return {
        "type": "object",
        "properties": {
            "id": b64url(1400), "rawId": b64url(1400), "type": choice(("public-key",)),
            "response": {"type": "object", "properties": response, "required": list(required)},
        },
        "required": ["id", "rawId", "type", "response"],
    }


# An attestation with a certificate chain runs to a few kilobytes.
REGISTRATION_CREDENTIAL = _credential(
    {"clientDataJSON": b64url(4000), "attestationObject": b64url(32000), "transports": array(string(32))},
    ("clientDataJSON", "attestationObject"),
)
AUTHENTICATION_CREDENTIAL = _credential(
    {"clientDataJSON": b64url(4000), "authenticatorData": b64url(4000), "signature": b64url(1000),
     "userHandle": {"anyOf": [b64url(100, 0), {"type": "null"}]}},
    ("clientDataJSON", "authenticatorData", "signature"),
)
PASSKEY_OPTIONS = obj({"origin": ORIGIN})
REGISTER_PASSKEY = obj(
    {"challengeId": CHALLENGE_ID, "credential": REGISTRATION_CREDENTIAL, "name": NAME},
    required=("challengeId", "credential"),
)
PASSKEY_SIGN_IN = obj(
    {"challengeId": CHALLENGE_ID, "credential": AUTHENTICATION_CREDENTIAL}, required=("challengeId", "credential"),
)
# -- OpenID Connect (people.oidc) ---------------------------------------------------------------

# A provider's issuer URL, as its discovery document names itself (https; plain http only where
# PEOPLE_OIDC_ALLOW_HTTP or development allows it, checked by the service).
ISSUER = string(500, 8, pattern=r"^https?://[^\s?#]+$")
DOMAIN = string(253, 3, pattern=r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$")
OIDC_PROVIDER = obj(
    {
        "issuer": ISSUER,
        "clientId": string(500, 1, pattern=r"^\S+$"),
        # Omitted: the stored secret stays; null: none (a public client, PKCE alone).
        "clientSecret": {"anyOf": [string(2000, 1), {"type": "null"}]},
        "name": NAME,
        "teamEmailDomain": {"anyOf": [DOMAIN, {"type": "null"}]},
    },
    required=("issuer", "clientId"),
)
OIDC_START = obj({"origin": ORIGIN, "next": NEXT})
OIDC_CALLBACK = obj({"state": string(200, 16, pattern=r"^[A-Za-z0-9_-]+$"), "code": string(2000, 1)}, required=("state", "code"))

# A batch of the people an import brings (the portability service sends it).
IMPORT = obj(
    {"workspace": string(100, 1), "source": string(20, 1, pattern=r"^[a-z]+$"), "kind": choice(("people",)),
     "items": {"type": "array", "items": {"type": "object"}, "maxItems": 1000}},
    required=("workspace", "source", "kind", "items"),
)

# A page of a workspace's people for its export (the portability service asks; paged by id), or
# the persons of ``ids`` (people its posts and votes name who never signed in there).
EXPORT = obj(
    {"workspace": string(100, 1), "kind": choice(("people",)), "after": {"type": ["string", "null"], "maxLength": 64},
     "limit": integer(1, 1000, 500), "ids": {**array(string(24, 24, pattern=r"^[0-9a-f]{24}$")), "maxItems": 1000}},
    required=("workspace", "kind"),
)
