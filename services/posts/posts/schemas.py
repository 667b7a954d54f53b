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
    exactly_one,
    integer,
    long_string,
    obj,
    string,
)
from posts import contract

# A board or status named in a body; one the workspace does not have is a 404.
BOARD_SLUG = string(100, 1, description="slug of one of the workspace's boards (another is 404)")
BOARD_ID = string(64, 1, description="id of one of the workspace's boards (another is 404)")
STATUS_SLUG = string(100, 1, description="slug of one of the workspace's statuses (another is 404)")
TITLE = string(contract.TITLE_MAX, 1, pattern=VISIBLE, description="not blank; kept without surrounding spaces")
MODERATION_STATE = choice(contract.MODERATION_STATES)

# The board by its slug or by its id (GET /boards lists both): exactly one of them.
CREATE_POST = {
    **obj(
        {
            "boardSlug": BOARD_SLUG,
            "boardId": BOARD_ID,
            "title": TITLE,
            "content": long_string(contract.CONTENT_MAX, description="markdown; longer is 413"),
        },
        required=("title", "content"),
    ),
    **exactly_one("boardSlug", "boardId"),
}
UPDATE_POST = obj(
    {
        "statusSlug": STATUS_SLUG,
        "moderationState": MODERATION_STATE,
        "title": TITLE,
        "content": long_string(contract.CONTENT_MAX, description="markdown; longer is 413"),
        "notify": {"type": "boolean", "default": True,
                   "description": "false: a status change mails nobody (silent housekeeping; the event still says it)"},
        "owner": {"type": ["string", "null"], "maxLength": 210, "pattern": r"^person:[^\s]{1,200}$",
                  "description": "a team member's user id (person:<id>; another is 404), null: nobody (team only)"},
        "eta": {"type": ["string", "null"], "pattern": r"^[0-9]{4}-(0[1-9]|1[0-2])$", "description": "the month it should ship, YYYY-MM; null: none"},
        "tags": {"type": "array", "items": string(40, 1), "maxItems": contract.MAX_TAGS,
                 "description": "the post's tags, by slug (the workspace's: GET /triage; another is 404), replacing its tags"},
        "fields": {"type": "object", "maxProperties": contract.MAX_FIELDS,
                   "description": "custom field values by key, merged into the post's (null clears one); each must fit its field's type (400); a key the workspace has no field for is 404"},
    }
)
# A comment's new words (PATCH .../comments/{commentId}: its author, within the window).
EDIT_COMMENT = obj({"content": long_string(contract.COMMENT_MAX, 1, description="markdown; longer is 413")}, required=("content",))
# A workspace's triage settings (PUT /triage replaces them whole; posts.triage).
TRIAGE = obj(
    {
        "tags": {"type": "array", "maxItems": contract.MAX_TAGS, "items": obj(
            {"slug": string(40, 1, pattern=contract.KEY_PATTERN), "name": string(60, 1, pattern=VISIBLE),
             "color": string(7, 7, pattern=contract.COLOR_PATTERN, description="#rrggbb")},
            required=("slug", "name", "color"))},
        "fields": {"type": "array", "maxItems": contract.MAX_FIELDS, "items": obj(
            {"key": string(40, 1, pattern=contract.KEY_PATTERN, description="its name in filters (field.<key>=) and the score formula"),
             "name": string(60, 1, pattern=VISIBLE),
             "type": choice(contract.FIELD_TYPES),
             "public": {"type": "boolean", "default": False, "description": "shown on the board and to every caller; false: the team's only"},
             "options": {"type": "array", "maxItems": contract.MAX_OPTIONS, "items": string(60, 1, pattern=VISIBLE),
                         "description": "select and multiselect fields: the values allowed"},
             "min": {"type": "number"}, "max": {"type": "number"}},
            required=("key", "name", "type"))},
        "scoreFormula": {"type": ["string", "null"], "maxLength": contract.FORMULA_MAX,
                         "description": "arithmetic over votes, revenue and number or checkbox field keys: + - * / ( ) min() max(); "
                                        "null: the vote count"},
    },
    required=("tags", "fields"),
)
# An unsaved score formula tried on the workspace's posts (POST /triage/preview; posts.triage).
TRIAGE_PREVIEW = obj(
    {
        "scoreFormula": {"type": ["string", "null"], "maxLength": contract.FORMULA_MAX,
                         "description": "the formula to try, over the saved fields (as in PUT /triage); null: the vote count; "
                                        "absent: the saved formula"},
        "limit": integer(1, contract.PREVIEW_LIMIT[1], contract.PREVIEW_LIMIT[0]),
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
# Whether a board or a status has posts (the workspaces service asks before deleting one).
IN_USE = {
    **obj({"workspace": string(100, 1), "boardId": string(64, 1), "status": string(64, 1)}, required=("workspace",)),
    **exactly_one("boardId", "status"),
}
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
SORT = choice((*contract.SORTS, contract.TRENDING_SORT), contract.DEFAULT_SORT,
              description=f"ties broken by id; trending: the most votes cast in the last {contract.TRENDING_DAYS} days first, "
                          "then by votes; revenue (the spend of the companies behind the votes) and score (the workspace's "
                          "formula) are the team's only")
TAG_FILTER = {"type": "array", "items": string(40, 1), "maxItems": 10, "description": "tag slug, repeatable: posts with every one"}
OWNER_FILTER = {**TEXT, "maxLength": 210, "description": "team only: the owner's user id (person:<id>)"}
FIELD_FILTER = string(60, 1, description="field.<key>=<value>: posts whose select, multiselect or checkbox field has the value "
                                        "(an internal field: the team only)")
SUGGESTION_STATE = choice(contract.SUGGESTION_STATES, contract.OPEN)
SUGGESTIONS_LIMIT = integer(1, contract.SUGGESTIONS_LIMIT[1], contract.SUGGESTIONS_LIMIT[0])
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
ACTIVITY_DAYS = integer(1, contract.ACTIVITY_DAYS[1], contract.ACTIVITY_DAYS[0], description="days back, today (UTC) included")
STATS_TOP = integer(1, contract.STATS_TOP[1], contract.STATS_TOP[0], description="how many most voted and newest posts")
COMMENTS_LIMIT = integer(1, contract.COMMENTS_LIMIT[1], contract.COMMENTS_LIMIT[0])
ROADMAP_LIMIT = integer(1, contract.ROADMAP_LIMIT[1], contract.ROADMAP_LIMIT[0], description="items per column")

# A batch of what an import brings (the portability service sends it; posts.imports).
IMPORT = obj(
    {"workspace": string(100, 1), "source": string(20, 1, pattern=r"^[a-z]+$"), "kind": choice(contract.IMPORT_KINDS),
     "items": {"type": "array", "items": {"type": "object"}, "maxItems": 1000},
     "recount": {"type": "boolean", "default": True,
                 "description": "false: the posts the batch touched are not counted again now (kind recount does it later)"}},
    required=("workspace", "source", "kind", "items"),
)

# A page of a workspace's data for its export (the portability service asks; paged by id).
EXPORT = obj(
    {"workspace": string(100, 1), "kind": choice(contract.EXPORT_KINDS),
     "after": {"type": ["string", "null"], "maxLength": 64}, "limit": integer(1, 1000, 500)},
    required=("workspace", "kind"),
)
