"""What the posts service owns, publishes and consumes."""

from common.auth import ACTOR_SCHEMA as ACTOR
from common.validation import BOOLEAN, ID, INTEGER, TEXT, TIMESTAMP, array, nullable, shape

TOPIC = "feedback.posts"
# What a workspace's export reads of this service (POST /internal/posts/export).
EXPORT_KINDS = ("posts", "votes", "comments", "tags", "fields")
# What an import writes here, in this order (POST /internal/posts/import, posts.imports).
IMPORT_KINDS = ("tags", "fields", "posts", "merges", "votes", "comments", "recount")
# Its own topic too: a new post is compared with the others (suggested duplicates), and a save
# of the triage settings rescores the workspace, after the write that says so commits.
# And the people service's: a person erased (posts.erasure).
CONSUMES = ("feedback.workspaces", "feedback.companies", TOPIC, "feedback.people")
WORKSPACES_TOPIC, COMPANIES_TOPIC, _, PEOPLE_TOPIC = CONSUMES
PERSON_ERASED = "person.erased"

POST_CREATED = "post.created"
POST_UPDATED = "post.updated"
POST_STATUS_CHANGED = "post.status_changed"
POST_MERGED = "post.merged"
POST_UNMERGED = "post.unmerged"
COMMENT_CREATED = "comment.created"
POST_DELETED = "post.deleted"
COMMENT_EDITED = "comment.edited"
COMMENT_DELETED = "comment.deleted"
VOTE_CREATED = "vote.created"
VOTE_DELETED = "vote.deleted"
TRIAGE_UPDATED = "triage.updated"

STATUS = shape({"slug": TEXT, "name": TEXT, "color": TEXT})
TAG = shape({"slug": TEXT, "name": TEXT, "color": TEXT})
FIELD_DEFINITION = {
    "type": "object",
    "required": ["key", "name", "type", "public"],
    "properties": {"key": TEXT, "name": TEXT, "type": TEXT, "public": BOOLEAN, "options": array(TEXT),
                   "min": {"type": "number"}, "max": {"type": "number"}},
}
TRIAGE = {
    "type": "object",
    "required": ["tags", "fields"],
    "properties": {"tags": array(TAG), "fields": array(FIELD_DEFINITION), "scoreFormula": nullable(TEXT), "version": INTEGER},
}
# Who wrote a post or comment, as the board shows them (posts.shapes.Reader): a person's or an
# SSO user's name and avatar when they wrote it; null for an API key, the operator, an
# anonymous visitor, an item written before authors were kept, and (for end users, with the
# workspace's ``hideCustomerNames``) another end user.
AUTHOR = nullable(shape({"name": nullable(TEXT), "avatarUrl": nullable(TEXT), "isTeamMember": BOOLEAN}))
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
        "editedAt": nullable(TIMESTAMP),  # when its title or content was last rewritten
        "author": AUTHOR,
        # Triage (posts.triage): the team's view, internal fields included.
        "tags": array(TAG),
        "eta": nullable(TEXT),
        "fields": {"type": "object"},
        "owner": nullable(shape({"id": TEXT, "name": nullable(TEXT)})),
        "score": {"type": "number"},
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
        "author": AUTHOR,
        "isPrivate": BOOLEAN,  # team-only: a webhook receiver must not show it to end users
        "createdAt": TIMESTAMP,
    }
)
VOTE = shape({"postId": ID, "userId": TEXT, "voteCount": INTEGER})
# What a deletion's event says of what went: ids and the post's title (the team's receivers
# knew it already), never the content, which nobody is shown again.
DELETED_POST = shape({"id": ID, "title": TEXT, "boardId": TEXT})
DELETED_COMMENT = shape({"id": ID, "postId": ID, "parentId": nullable(ID), "isPrivate": BOOLEAN})

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
    # Soft deletions (docs/services/posts.md, "Deleting and editing"): ``byAuthor`` true when
    # the author took back their own words, false when the team removed them.
    POST_DELETED: shape({"post": DELETED_POST, "actor": ACTOR, "byAuthor": BOOLEAN}),
    # A comment's author rewrote it (its new content: a receiver replaces what it showed).
    COMMENT_EDITED: shape({"comment": COMMENT, "post": shape({"id": ID, "title": TEXT}), "actor": ACTOR}),
    COMMENT_DELETED: shape({"comment": DELETED_COMMENT, "post": shape({"id": ID, "title": TEXT}), "actor": ACTOR,
                            "byAuthor": BOOLEAN}),
    VOTE_CREATED: VOTE,
    VOTE_DELETED: VOTE,
    # The workspace's tags, fields and score formula were saved (every post is rescored after it).
    TRIAGE_UPDATED: shape({"settings": TRIAGE, "actor": ACTOR}),
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
    "score": [("score", -1), ("_id", -1)],
}
SCORE_SORT = "score"
# Triage settings (posts.triage): the custom field types, how many tags, fields and options a
# workspace has at most, tag slugs and field keys (a field key is a score formula's name), a
# tag's color, and a formula's length in characters.
FIELD_TYPES = ("text", "number", "select", "multiselect", "date", "checkbox")
MAX_TAGS, MAX_FIELDS, MAX_OPTIONS = 100, 50, 100
KEY_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"
FORMULA_MAX = 500
PREVIEW_LIMIT = (10, 50)  # posts a formula's preview ranks: default, most
# Trending (posts.board.Board.trending): the posts with the most votes cast in the last
# TRENDING_DAYS first (of the TRENDING_MAX most voted lately), then the rest by votes.
TRENDING_SORT, TRENDING_DAYS, TRENDING_MAX = "trending", 14, 1000
TEAM_SORTS = ("revenue", SCORE_SORT)  # an order by customers' spend (a score may weigh it) would tell others what it is
DEFAULT_SORT = "newest"

# A post's history (status changes and merges, posts.shapes.history): the newest this many are kept.
HISTORY_MAX = 100
STATUS_CHANGE, MERGED_INTO, MERGED_IN, UNMERGED_FROM, UNMERGED_OUT = "status", "merged_into", "merged_in", "unmerged_from", "unmerged_out"

# Content limits (characters). Longer content is 413, a longer title 400.
TITLE_MAX = 200
CONTENT_MAX = 20_000
COMMENT_MAX = 10_000
MAX_COMMENT_DEPTH = 20
# An author may edit and delete their post or comment for this long after writing it
# (POSTS_AUTHOR_WINDOW_SECONDS overrides it); the team may delete at any time.
AUTHOR_WINDOW_SECONDS = 15 * 60

LIST_LIMIT = (20, 100)  # default, maximum
SEARCH_LIMIT = (10, 50)
SEARCH_QUERY_MAX = 500  # characters of a search query
COMMENTS_LIMIT = (100, 500)
VOTES_LIMIT = (50, 200)  # a post's voters, for the team (default, maximum)
ROADMAP_LIMIT = (50, 200)  # items per column
# Suggested duplicates: at most this many per new post, those with a similarity (the estimated
# probability of a duplicate: posts.similarity) of at least POSTS_SUGGEST_SIMILARITY.
SUGGESTIONS_PER_POST = 3
SUGGESTIONS_LIMIT = (50, 200)
OPEN, ACCEPTED, DISMISSED, SUPERSEDED = "open", "accepted", "dismissed", "superseded"
SUGGESTION_STATES = (OPEN, ACCEPTED, DISMISSED, SUPERSEDED)
# Board statistics (GET /posts/stats): most and newest posts shown (default, maximum), the
# days after which a customer's unanswered comment counts as stalled (default, maximum), and
# the most stalled posts listed (oldest first): one page, so the read stays bounded.
STATS_TOP = (5, 50)
STALLED_DAYS = (14, 3650)
STALLED_MAX = 50
# Activity (GET /posts/activity, the team's): daily counts over the last days (default,
# maximum): a bounded number of days, so three grouped index ranges at most a year long.
ACTIVITY_DAYS = (30, 366)
ACTIVITY_COUNTS = ("posts", "votes", "comments")
