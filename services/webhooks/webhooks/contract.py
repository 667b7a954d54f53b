"""What the webhooks service owns, publishes and consumes.

It consumes every topic a discovered plugin publishes, and delivers every event type the
plugins declare (``ServiceSpec.events``): the event catalog is derived from the specs at
start (``webhooks.plugin.create_context``), never listed here.
"""

from common.validation import BOOLEAN, ID, TEXT, TIMESTAMP, array, nullable, shape

TOPIC = "feedback.webhooks"
CONSUMER_GROUP = "feedback.webhooks.dispatcher"

WEBHOOK_DISABLED = "webhook.disabled"
# Sent by the API to one endpoint only, never through Kafka: {webhookId, message}.
WEBHOOK_TEST = "webhook.test"

WEBHOOK = shape(
    {
        "id": ID,
        "url": TEXT,
        "events": array(TEXT),
        "disabled": BOOLEAN,
        "disabledReason": nullable(TEXT),
        "createdAt": TIMESTAMP,
        "updatedAt": TIMESTAMP,
    }
)

# Every event on feedback.webhooks and the JSON schema of its ``data`` (the endpoint, no secret).
EVENTS = {WEBHOOK_DISABLED: WEBHOOK}

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

DELIVERIES_LIMIT = (20, 100)  # the delivery log's page: default, maximum
ATTEMPT_LOG_SIZE = 20  # attempts kept per delivery (10 per schedule, plus resends)
KEEP_DELIVERIES_DAYS = 30  # the delivery log's retention (TTL index)
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
MAX_RESPONSE_BYTES = 64 * 1024  # read of a receiver's answer; the rest is dropped
USER_AGENT = "feedback-webhooks/1.0 (+https://www.standardwebhooks.com)"
