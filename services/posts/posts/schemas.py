"""Request bodies the posts service accepts (JSON Schema, strict).

Lengths of ``content`` are checked by the service (413 past the limit), so the schemas
only bound them loosely; titles past their limit are 400.
"""

from common.validation import BOOLEAN, obj, string
from posts.contract import MODERATION_STATES, TITLE_MAX

LOOSE = 1_000_000  # content is measured in the service, which answers 413

CREATE_POST = obj(
    {"boardSlug": string(100, 1), "title": string(TITLE_MAX, 1), "content": string(LOOSE)},
    required=("boardSlug", "title", "content"),
)
UPDATE_POST = obj(
    {
        "statusSlug": string(100, 1),
        "moderationState": {"type": "string", "enum": list(MODERATION_STATES)},
        "title": string(TITLE_MAX, 1),
        "content": string(LOOSE),
    }
)
MERGE = obj({"intoPostId": string(64, 1)}, required=("intoPostId",))
CREATE_COMMENT = obj(
    {"content": string(LOOSE, 1), "parentId": {"type": ["string", "null"], "maxLength": 64}, "isPrivate": BOOLEAN},
    required=("content",),
)
LOOKUP = obj(
    {"workspace": string(100, 1), "ids": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 1000}},
    required=("workspace", "ids"),
)
