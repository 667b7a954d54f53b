"""Request bodies and query parameters the workspaces service accepts (JSON Schema, strict).

These are the schemas the OpenAPI document shows: ``openapi.yaml`` names each with
``x-schema`` and the gateway puts it in.
"""

from common import i18n
from common.ids import SLUG_PATTERN as SLUG  # workspaces, boards and statuses share it
from common.validation import BOOLEAN, VISIBLE, integer, obj, string
from workspaces import contract

COLOR = r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
# No spaces of any kind (VISIBLE's characters), so every regex engine reads it alike.
HTTPS_URL = rf"^https?://{VISIBLE}+$"
# An origin as a browser sends it (RFC 6454): scheme, lower-case host, optional port, no path;
# https, or http on loopback only (development). The widget compares origins with default ports
# made explicit, so ``https://x.com:443`` and ``https://x.com`` are one.
_HOST_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_PORT = r"(:[1-9][0-9]{0,4})?"
WIDGET_ORIGIN = rf"^(https://{_HOST_LABEL}(\.{_HOST_LABEL})*|http://(127\.0\.0\.1|localhost)){_PORT}$"
# The embeddable widget (services/widget): the origins whose pages may embed it (CORS), where its
# launcher sits and what it says.
WIDGET_POSITIONS = ("bottom-right", "bottom-left")
WIDGET_POSITION_DEFAULT = "bottom-right"
WIDGET_LABEL_DEFAULT = "Feedback"
WIDGET_LABEL_MAX = 40
WIDGET_ORIGINS_MAX = 20
MAX_POST_IDS = 100
ORDER = {"type": "integer", "minimum": 0, "maximum": 1000}

CREATE_WORKSPACE = obj(
    {"slug": string(48, 1, pattern=SLUG), "name": string(100, 1)},
    required=("slug", "name"),
)
UPDATE_WORKSPACE = obj(
    {
        "name": string(100, 1),
        "logo": {"type": ["string", "null"], "maxLength": 2000, "pattern": HTTPS_URL, "description": "an http(s) URL"},
    }
)

SETTINGS = obj(
    {
        "primaryColor": string(7, pattern=COLOR),
        "theme": {"type": "string", "enum": list(contract.THEMES)},
        "hidePoweredBy": BOOLEAN,
        "anonSubmit": BOOLEAN,
        "anonVote": BOOLEAN,
        "anonComment": BOOLEAN,
        "authorVotes": {
            "type": "boolean",
            "description": (
                "a new post's author votes for it (true by default): an SSO user or a person signed in with a "
                "session; never an anonymous visitor, a manager key without a user, the operator or a write key"
            ),
        },
        "hideCustomerNames": {
            "type": "boolean",
            "description": (
                "end users' names and avatars are hidden from other end users (shown as \"Customer\"; false by "
                "default); the team, and each person for their own posts and comments, still see them"
            ),
        },
        "erasedUserContent": {
            "type": "string",
            "enum": list(contract.ERASED_USER_CONTENT),
            "description": (
                "what becomes of the posts and comments of a person who is erased (docs/privacy.md): \"keep\" "
                "(the default) keeps them, written by \"Deleted user\"; \"delete\" deletes them"
            ),
        },
        "widgetOrigins": {
            "type": "array",
            "maxItems": WIDGET_ORIGINS_MAX,
            "uniqueItems": True,
            "items": {"type": "string", "maxLength": 300, "pattern": WIDGET_ORIGIN},
            "description": (
                "the origins whose pages may embed the widget (https://host[:port], lower case, no path; "
                "http:// only for 127.0.0.1 and localhost, for development); the platform's own is always allowed"
            ),
        },
        "widgetPosition": {"type": "string", "enum": list(WIDGET_POSITIONS),
                           "description": "where the widget's launcher sits on the page"},
        "widgetLabel": string(WIDGET_LABEL_MAX, 1, pattern=rf"^{VISIBLE}(.*{VISIBLE})?$",
                              description="the widget launcher's words (its accessible name)"),
        "defaultLocale": {"type": "string", "enum": list(i18n.LOCALES),
                          "description": "the language of the board, the widget and mails where a person's own choice "
                                         "and their browser's languages name none of the enabled ones (docs/languages.md)"},
        "locales": {"type": "array", "minItems": 1, "maxItems": len(i18n.LOCALES), "uniqueItems": True,
                    "items": {"type": "string", "enum": list(i18n.LOCALES)},
                    "description": "the languages people may see the workspace in (all by default); must hold defaultLocale"},
        "brandVoice": string(2000),
        "ssoSecret": {
            "description": (
                f'a secret of your choosing, "{contract.SSO_SECRET_GENERATE}" for one the platform generates '
                "(256 random bits), or null for none; tokens it signs must carry `aud` = the workspace slug"
            ),
            "oneOf": [
                string(256, contract.SSO_SECRET_MIN_LENGTH),
                {"type": "string", "enum": [contract.SSO_SECRET_GENERATE]},
                {"type": "null"},
            ],
        },
    }
)

BOARD_DESCRIPTION = string(500, description="a line on what the board is for")
CREATE_BOARD = obj(
    {"slug": string(48, 1, pattern=SLUG), "name": string(100, 1), "description": BOARD_DESCRIPTION},
    required=("slug", "name"),
)
UPDATE_BOARD = obj(
    {
        "name": string(100, 1),
        "description": BOARD_DESCRIPTION,
        "position": {**ORDER, "description": "where the board goes in the list (0: first; past the end: last)"},
        "archived": {
            "type": "boolean",
            "description": "an archived board is hidden from visitors and takes no new posts; its posts stay readable",
        },
    }
)
# GET /boards?archived=true: the team's list, archived boards included (anyone else: 403).
BOARDS_ARCHIVED = {
    "type": "string",
    "enum": ["false", "true"],
    "default": "false",
    "description": "true: every board, archived ones included (the team only); false: the boards open to posts",
}

CLOSED = {"type": "boolean", "description": "posts in this status count as closed (done with): false by default"}
CREATE_STATUS = obj(
    {
        "slug": string(48, 1, pattern=SLUG),
        "name": string(50, 1),
        "color": string(7, pattern=COLOR),
        "order": ORDER,
        "roadmap": BOOLEAN,
        "closed": CLOSED,
    },
    required=("slug", "name", "color"),
)
UPDATE_STATUS = obj(
    {"name": string(50, 1), "color": string(7, pattern=COLOR), "order": ORDER, "roadmap": BOOLEAN, "closed": CLOSED}
)

CREATE_API_KEY = obj(
    {
        "name": string(100, 1),
        "role": {
            "type": "string",
            "enum": list(contract.KEY_ROLES),
            "description": (
                "manager (default): everything in the workspace; write: submit, vote and comment as an "
                "identified agent; read: reads what any visitor may"
            ),
        },
        "expiresInSeconds": integer(
            *contract.GRANT_SECONDS,
            description=(
                'makes a grant: the key expires this many seconds from now (then 401 "this API key has '
                'expired", and it is deleted)'
            ),
        ),
    },
    required=("name",),
)

POST_IDS = {
    "type": "array",
    "items": {"type": "string", "maxLength": 64},
    "maxItems": MAX_POST_IDS,
    "description": "ids of posts of this workspace (an unknown or malformed one is 404)",
}
CREATE_CHANGELOG = obj(
    {
        "title": string(200, 1),
        "slug": string(100, 1, pattern=SLUG),
        "content": string(50_000, 1),
        "postIds": POST_IDS,
        "publish": BOOLEAN,
    },
    required=("title", "slug", "content"),
)
UPDATE_CHANGELOG = obj({"title": string(200, 1), "content": string(50_000, 1), "publish": BOOLEAN, "postIds": POST_IDS})

CHANGELOG_LIMIT = integer(1, contract.CHANGELOG_LIMIT[1], contract.CHANGELOG_LIMIT[0])

IDENTITY = obj(
    # workspace is null for a route without one in its path: only an API key is checked then
    {"workspace": {"type": ["string", "null"], "maxLength": 2000}, "apiKey": {"type": ["string", "null"]}, "userToken": {"type": ["string", "null"]}},
    required=("workspace",),
)

# A batch of what an import brings (the portability service sends it; workspaces.imports).
IMPORT = obj(
    {"workspace": string(100, 1), "source": string(20, 1, pattern=r"^[a-z]+$"), "kind": {"enum": list(contract.IMPORT_KINDS)},
     "items": {"type": "array", "items": {"type": "object"}, "maxItems": 1000}},
    required=("workspace", "source", "kind", "items"),
)

# A page of a workspace's data for its export (the portability service asks; paged by id).
EXPORT = obj(
    {"workspace": string(100, 1), "kind": {"enum": list(contract.EXPORT_KINDS)},
     "after": {"type": ["string", "null"], "maxLength": 64}, "limit": integer(1, 1000, 500)},
    required=("workspace", "kind"),
)
