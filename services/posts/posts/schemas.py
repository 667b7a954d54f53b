"""Request bodies and query parameters the posts service accepts (JSON Schema, strict).

These are the schemas the OpenAPI document shows: ``openapi.yaml`` names each with
``x-schema`` and the gateway puts it in. Content past its length is a 413 (``long_string``);
every other violation is a 400.
"""

from common.validation import (
    BOOLEAN,
    TEXT,
    VISIBLE,
    choice,
    integer,
    long_string,
    obj,
    string,
)
from posts import contract

# A board or status named in a body; one the workspace does not have is a 404.
BOARD_SLUG = string(100, 1, description="slug of one of the workspace's boards (another is 404)")
STATUS_SLUG = string(100, 1, description="slug of one of the workspace's statuses (another is 404)")
TITLE = string(contract.TITLE_MAX, 1, pattern=VISIBLE, description="not blank; kept without surrounding spaces")
MODERATION_STATE = choice(contract.MODERATION_STATES)

CREATE_POST = obj(
    {
        "boardSlug": BOARD_SLUG,
        "title": TITLE,
        "content": long_string(contract.CONTENT_MAX, description="markdown; longer is 413"),
    },
    required=("boardSlug", "title", "content"),
)
UPDATE_POST = obj(
    {
        "statusSlug": STATUS_SLUG,
        "moderationState": MODERATION_STATE,
        "title": TITLE,
        "content": long_string(contract.CONTENT_MAX, description="markdown; longer is 413"),
        "notify": {"type": "boolean", "default": True,
                   "description": "false: a status change mails nobody (silent housekeeping; the event still says it)"},
    }
)
MERGE = obj(
    {"intoPostId": string(64, 1, description="the canonical post's id (an unknown or malformed one is 404)")},
    required=("intoPostId",),
)
CREATE_COMMENT = obj(
    {
        "content": long_string(contract.COMMENT_MAX, 1, description="markdown; longer is 413"),
        "parentId": {
            "type": ["string", "null"],
            "maxLength": 64,
            "description": "the comment this replies to, on the same post (an unknown or malformed id is 404)",
        },
        "isPrivate": BOOLEAN,
    },
    required=("content",),
)
LOOKUP = obj(
    {"workspace": string(100, 1), "ids": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 1000}},
    required=("workspace", "ids"),
)

# -- query parameters ---------------------------------------------------------------------

# A vote on someone's behalf (a sales call, a support ticket): the person by email or user id.
VOTE_FOR = obj(
    {
        "email": string(254, 3, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", description="the person's address (made a person if new)"),
        "userId": string(210, 3, pattern=r"^(person|sso):[^\s]{1,200}$", description="the user as votes name users: person:<id>, sso:<id>"),
        "source": obj({"text": string(200, 1, pattern=VISIBLE, description='where the request came from: "Zendesk #4411"'),
                       "url": string(2000, 1, pattern=r"^https?://\S+$")}, required=("text",)),
        "note": string(2000, 1, description="what the customer said (team only)"),
    }
)
VOTES_LIMIT = integer(1, contract.VOTES_LIMIT[1], contract.VOTES_LIMIT[0])
BOARD_FILTER = {**TEXT, "description": "board slug; an unknown board matches nothing"}
STATUS_FILTER = {**TEXT, "description": "status slug; an unknown status matches nothing"}
TEXT_FILTER = {**TEXT, "description": "text filter: posts containing every significant word (stemmed)"}
SORT = choice(contract.SORTS, contract.DEFAULT_SORT, description="ties broken by id; revenue (the spend of the companies behind the votes) is the team's only")
MODERATION_FILTER = choice(
    contract.MODERATION_STATES,
    description="managers: filter by state (default: all); others may only ask for approved",
)
LIST_LIMIT = integer(1, contract.LIST_LIMIT[1], contract.LIST_LIMIT[0])
SEARCH_QUERY = string(contract.SEARCH_QUERY_MAX, 1, pattern=VISIBLE, description="words to match (not blank)")
SEARCH_LIMIT = integer(1, contract.SEARCH_LIMIT[1], contract.SEARCH_LIMIT[0])
STALLED_DAYS = integer(
    0, contract.STALLED_DAYS[1], contract.STALLED_DAYS[0],
    description="a post is stalled when its last public comment is a non-team member's and older than this",
)
STATS_TOP = integer(1, contract.STATS_TOP[1], contract.STATS_TOP[0], description="how many most voted and newest posts")
COMMENTS_LIMIT = integer(1, contract.COMMENTS_LIMIT[1], contract.COMMENTS_LIMIT[0])
ROADMAP_LIMIT = integer(1, contract.ROADMAP_LIMIT[1], contract.ROADMAP_LIMIT[0], description="items per column")
