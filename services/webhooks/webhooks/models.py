"""The webhooks service's collections, declared with mongoengine (fields, defaults, indexes).

New documents are built from these models (``common.db.new_document``); the repository reads
and writes them through pymongo because claims, leases and outbox transactions need
operators mongoengine 0.29 does not offer.
"""

from mongoengine import (
    BooleanField,
    DateTimeField,
    DictField,
    Document,
    EmbeddedDocument,
    EmbeddedDocumentListField,
    IntField,
    ListField,
    ObjectIdField,
    StringField,
)

from webhooks.contract import KEEP_DELIVERIES_DAYS

ALIAS = "webhooks"


class Secret(EmbeddedDocument):
    key = StringField(required=True)  # whsec_<base64>, sealed (common.secretbox): the sender reads it back to sign
    createdAt = DateTimeField(required=True)
    expiresAt = DateTimeField(null=True)  # set on the old secret when it is rotated out


class Endpoint(Document):
    workspace = StringField(required=True)
    url = StringField(required=True)
    events = ListField(StringField())  # empty: every event type
    disabled = BooleanField(default=False)
    disabledReason = StringField(null=True)
    disabledAt = DateTimeField(null=True)
    secrets = EmbeddedDocumentListField(Secret)  # newest first
    failingSince = DateTimeField(null=True)  # first failed attempt since the last success
    createdAt = DateTimeField(required=True)
    updatedAt = DateTimeField(required=True)
    COLLECTION = "endpoints"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("workspace", "disabled"), ("workspace", "createdAt")],
    }
    SEALED = ("secrets.key",)  # what ``feedback reseal-secrets`` rewrites


class Attempt(EmbeddedDocument):
    at = DateTimeField(required=True)
    statusCode = IntField(null=True)
    error = StringField(null=True)
    durationMs = IntField(required=True)


class Delivery(Document):
    """One event for one endpoint: a due-time record the dispatchers claim and attempt."""

    workspace = StringField(required=True)
    endpointId = ObjectIdField(required=True)
    eventId = StringField(required=True)
    messageId = StringField(required=True)  # the webhook-id header, the same on every attempt
    type = StringField(required=True)
    payload = DictField(required=True)  # {type, timestamp, data}: the body of every attempt
    status = StringField(required=True)
    nextAttemptAt = DateTimeField(null=True)  # due time; pushed forward by a claim (the lease)
    claim = StringField(null=True)  # token of the dispatcher holding the lease
    attemptCount = IntField(default=0)
    scheduleStart = IntField(default=0)  # attemptCount when the schedule (re)started (resend)
    attempts = EmbeddedDocumentListField(Attempt)  # the last ATTEMPT_LOG_SIZE attempts
    lastAttemptAt = DateTimeField(null=True)
    createdAt = DateTimeField(required=True)
    COLLECTION = "deliveries"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            {"fields": ["endpointId", "eventId"], "unique": True},  # recording is idempotent
            ("status", "nextAttemptAt"),  # the due queue
            ("endpointId", "-createdAt"),  # the delivery log
            {"fields": ["createdAt"], "expireAfterSeconds": KEEP_DELIVERIES_DAYS * 86400},
        ],
    }


MODELS = (Endpoint, Delivery)
