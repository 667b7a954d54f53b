"""What the posts service owns, publishes and consumes."""

from common.auth import ACTOR_SCHEMA as ACTOR
from common.validation import BOOLEAN, ID, INTEGER, TEXT, TIMESTAMP, array, nullable, shape

TOPIC = "feedback.posts"
CONSUMES = ("feedback.workspaces", "feedback.companies")
WORKSPACES_TOPIC, COMPANIES_TOPIC = CONSUMES

POST_CREATED = "post.created"
POST_UPDATED = "post.updated"
POST_STATUS_CHANGED = "post.status_changed"
POST_MERGED = "post.merged"
POST_UNMERGED = "post.unmerged"
COMMENT_CREATED = "comment.created"
VOTE_CREATED = "vote.created"
VOTE_DELETED = "vote.deleted"

STATUS = shape({"slug": TEXT, "name": TEXT, "color": TEXT})
# A Post as events carry it: the public comment count, no caller-specific ``voted``.
POST = shape(
    {
        "id": ID,
        "title": TEXT,
        "content": TEXT,
        "boardId": TEXT,
        "status": STATUS,
        "voteCount": INTEGER,
        "revenue": {"type": "number"},  # team only: events go to the team's webhooks
        "commentCount": INTEGER,
        "verified": BOOLEAN,
        "moderationState": TEXT,
        "mergedInto": nullable(shape({"id": ID, "title": TEXT})),
        "mergedPosts": array(shape({"id": ID, "title": TEXT, "voteCount": INTEGER})),
        "createdAt": TIMESTAMP,
    }
)
COMMENT = shape(
    {
        "id": ID,
        "postId": ID,
        "parentId": nullable(ID),
        "content": TEXT,
        "isTeamMember": BOOLEAN,
        "authorName": nullable(TEXT),  # a signed-in team member's name, shown with the team badge
        "isPrivate": BOOLEAN,  # team-only: a webhook receiver must not show it to end users
        "createdAt": TIMESTAMP,
    }
)
VOTE = shape({"postId": ID, "userId": TEXT, "voteCount": INTEGER})

# Every event on feedback.posts and the JSON schema of its ``data``. ``actor``: who made the
# change (common.auth.actor: a signed-in person, an API key, the operator; null for anonymous).
EVENTS = {
    POST_CREATED: shape({"post": POST, "actor": ACTOR}),
    POST_UPDATED: shape({"post": POST, "changed": array(TEXT), "actor": ACTOR}),
    # ``notify``: false when the manager asked that nobody be told (housekeeping).
    POST_STATUS_CHANGED: shape({"post": POST, "oldStatus": STATUS, "newStatus": STATUS, "actor": ACTOR, "notify": BOOLEAN}),
    POST_MERGED: shape({"post": POST, "into": POST, "actor": ACTOR}),
    POST_UNMERGED: shape({"post": POST, "from": nullable(POST), "actor": ACTOR}),
    COMMENT_CREATED: shape({"comment": COMMENT, "post": shape({"id": ID, "title": TEXT}), "actor": ACTOR}),
    VOTE_CREATED: VOTE,
    VOTE_DELETED: VOTE,
}

# Workspace snapshot events this service keeps a read model of.
WORKSPACE_SNAPSHOTS = ("workspace.created", "workspace.updated")

# Moderation states: `approved` is listed for everyone; the others only for managers.
APPROVED = "approved"
MODERATION_STATES = ("approved", "pending", "rejected", "spam")

SORTS = {
    "newest": [("createdAt", -1), ("_id", -1)],
    "oldest": [("createdAt", 1), ("_id", 1)],
    "top": [("voteCount", -1), ("_id", -1)],
    "discussed": [("commentCount", -1), ("_id", -1)],
    "revenue": [("revenueCents", -1), ("_id", -1)],
}
TEAM_SORTS = ("revenue",)  # an order by customers' spend would tell others what it is
DEFAULT_SORT = "newest"

# Content limits (characters). Longer content is 413, a longer title 400.
TITLE_MAX = 200
CONTENT_MAX = 20_000
COMMENT_MAX = 10_000
MAX_COMMENT_DEPTH = 20

LIST_LIMIT = (20, 100)  # default, maximum
SEARCH_LIMIT = (10, 50)
SEARCH_QUERY_MAX = 500  # characters of a search query
COMMENTS_LIMIT = (100, 500)
VOTES_LIMIT = (50, 200)  # a post's voters, for the team (default, maximum)
ROADMAP_LIMIT = (50, 200)  # items per column
# Board statistics (GET /posts/stats): most and newest posts shown (default, maximum), the
# days after which a customer's unanswered comment counts as stalled (default, maximum), and
# the most stalled posts listed (oldest first): one page, so the read stays bounded.
STATS_TOP = (5, 50)
STALLED_DAYS = (14, 3650)
STALLED_MAX = 50
