"""What the webhooks service owns, publishes and consumes, and the event catalog it delivers."""

TOPIC = "feedback.webhooks"
CONSUMER_GROUP = "feedback.webhooks.dispatcher"
# Consumes: every topic a discovered plugin publishes (common.plugins.load_services()).

COLLECTIONS = ("endpoints", "deliveries", "outbox", "processed_events", "locks")

# Events on feedback.webhooks:
WEBHOOK_DISABLED = "webhook.disabled"  # data: the endpoint (no secret) with disabledReason
# Sent by the API to one endpoint only, never through Kafka:
WEBHOOK_TEST = "webhook.test"  # data: {webhookId, message}

# The event catalog: every type a webhook endpoint can subscribe to, with its topic.
# Examples of each payload are in docs/services/webhooks.md. Types not listed here are
# internal and never leave the platform.
EVENT_CATALOG: dict[str, str | None] = {
    "workspace.created": "feedback.workspaces",
    "workspace.updated": "feedback.workspaces",
    "changelog.published": "feedback.workspaces",
    "post.created": "feedback.posts",
    "post.updated": "feedback.posts",
    "post.status_changed": "feedback.posts",
    "post.merged": "feedback.posts",
    "post.unmerged": "feedback.posts",
    "comment.created": "feedback.posts",
    "vote.created": "feedback.posts",
    "vote.deleted": "feedback.posts",
    "domain.pending": "feedback.domains",
    "domain.verified": "feedback.domains",
    "domain.broken": "feedback.domains",
    "domain.failed": "feedback.domains",
    "domain.removed": "feedback.domains",
    WEBHOOK_DISABLED: TOPIC,
    WEBHOOK_TEST: None,
}
EVENT_TYPES = tuple(EVENT_CATALOG)

# Standard Webhooks retry schedule: the first attempt at once, then these delays (seconds)
# after each failed attempt; ten attempts in all. Each delay gets up to +20 % jitter and is
# multiplied by WEBHOOK_RETRY_SCALE.
RETRY_DELAYS = (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
JITTER = 0.2
MAX_RETRY_AFTER = 24 * 3600  # a receiver's Retry-After is honoured up to this many seconds

# Delivery states.
PENDING = "pending"  # waiting for its next attempt (or being attempted, under a lease)
SUCCEEDED = "succeeded"
FAILED = "failed"  # every attempt failed, or the endpoint answered 410 Gone
CANCELLED = "cancelled"  # the endpoint was disabled or deleted before the attempt
DELIVERY_STATES = (PENDING, SUCCEEDED, FAILED, CANCELLED)

# Why an endpoint is disabled.
DISABLED_MANUALLY = "manual"
DISABLED_GONE = "gone"  # it answered 410 Gone
DISABLED_FAILING = "failing"  # every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS

ATTEMPT_LOG_SIZE = 20  # attempts kept per delivery (10 per schedule, plus resends)
KEEP_DELIVERIES_DAYS = 30  # the delivery log's retention (TTL index)
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
MAX_RESPONSE_BYTES = 64 * 1024  # read of a receiver's answer; the rest is dropped
USER_AGENT = "feedback-webhooks/1.0 (+https://www.standardwebhooks.com)"
