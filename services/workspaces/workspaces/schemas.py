"""Request bodies the workspaces service accepts (JSON Schema, strict)."""

from common.ids import SLUG_PATTERN as SLUG  # workspaces, boards and statuses share it
from common.validation import BOOLEAN, obj, string
from workspaces import contract

COLOR = r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
HTTPS_URL = r"^https?://[^\s]+$"
MAX_POST_IDS = 100
ORDER = {"type": "integer", "minimum": 0, "maximum": 1000}

CREATE_WORKSPACE = obj(
    {"slug": string(48, 1, pattern=SLUG), "name": string(100, 1)},
    required=("slug", "name"),
)
UPDATE_WORKSPACE = obj({"name": string(100, 1), "logo": {"type": ["string", "null"], "maxLength": 2000, "pattern": HTTPS_URL}})

SETTINGS = obj(
    {
        "primaryColor": string(7, pattern=COLOR),
        "theme": {"type": "string", "enum": list(contract.THEMES)},
        "hidePoweredBy": BOOLEAN,
        "anonSubmit": BOOLEAN,
        "anonVote": BOOLEAN,
        "anonComment": BOOLEAN,
        "brandVoice": string(2000),
        "ssoSecret": {"type": ["string", "null"], "minLength": contract.SSO_SECRET_MIN_LENGTH, "maxLength": 256},
    }
)

CREATE_BOARD = obj({"slug": string(48, 1, pattern=SLUG), "name": string(100, 1)}, required=("slug", "name"))

CREATE_STATUS = obj(
    {
        "slug": string(48, 1, pattern=SLUG),
        "name": string(50, 1),
        "color": string(7, pattern=COLOR),
        "order": ORDER,
        "roadmap": BOOLEAN,
    },
    required=("slug", "name", "color"),
)
UPDATE_STATUS = obj(
    {"name": string(50, 1), "color": string(7, pattern=COLOR), "order": ORDER, "roadmap": BOOLEAN}
)

CREATE_API_KEY = obj(
    {
        "name": string(100, 1),
        "role": {"type": "string", "enum": list(contract.KEY_ROLES)},
        "expiresInSeconds": {"type": "integer", "minimum": contract.GRANT_SECONDS[0], "maximum": contract.GRANT_SECONDS[1]},
    },
    required=("name",),
)

POST_IDS = {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": MAX_POST_IDS}
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

IDENTITY = obj(
    # workspace is null for a route without one in its path: only an API key is checked then
    {"workspace": {"type": ["string", "null"], "maxLength": 2000}, "apiKey": {"type": ["string", "null"]}, "userToken": {"type": ["string", "null"]}},
    required=("workspace",),
)
