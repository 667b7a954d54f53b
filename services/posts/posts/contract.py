"""What the posts service owns, publishes and consumes."""

TOPIC = "feedback.posts"
CONSUMES = ("feedback.workspaces",)

# Events on feedback.posts (data shapes in docs/services/posts.md):
POST_CREATED = "post.created"  # data: {post}
POST_UPDATED = "post.updated"  # data: {post, changed: [field names]}
POST_STATUS_CHANGED = "post.status_changed"  # data: {post, oldStatus, newStatus}
POST_MERGED = "post.merged"  # data: {post, into}
POST_UNMERGED = "post.unmerged"  # data: {post, from}
COMMENT_CREATED = "comment.created"  # data: {comment, post: {id, title}}; isPrivate marks team-only comments
VOTE_CREATED = "vote.created"  # data: {postId, userId, voteCount}
VOTE_DELETED = "vote.deleted"  # data: {postId, userId, voteCount}

# Workspace snapshot events this service keeps a read model of.
WORKSPACE_SNAPSHOTS = ("workspace.created", "workspace.updated")

COLLECTIONS = ("posts", "votes", "comments", "workspaces", "outbox", "processed_events", "locks")

# Moderation states: `approved` is listed for everyone; the others only for managers.
APPROVED = "approved"
MODERATION_STATES = ("approved", "pending", "rejected", "spam")

SORTS = {
    "newest": [("createdAt", -1), ("_id", -1)],
    "oldest": [("createdAt", 1), ("_id", 1)],
    "top": [("voteCount", -1), ("_id", -1)],
    "discussed": [("commentCount", -1), ("_id", -1)],
}
DEFAULT_SORT = "newest"

# Content limits (characters). Longer content is 413, a longer title 400.
TITLE_MAX = 200
CONTENT_MAX = 20_000
COMMENT_MAX = 10_000
MAX_COMMENT_DEPTH = 20

LIST_LIMIT = (20, 100)  # default, maximum
MAX_OFFSET = 10_000
SEARCH_LIMIT = (10, 50)
COMMENTS_LIMIT = (100, 500)
ROADMAP_LIMIT = (50, 200)  # items per column
