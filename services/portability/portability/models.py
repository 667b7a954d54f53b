"""The portability service's collections: one document per export job; the zip itself is a
GridFS file of the bucket ``exports`` in the same database (``exports.files``/``exports.chunks``)."""

from mongoengine import DateTimeField, DictField, Document, IntField, ListField, ObjectIdField, StringField

ALIAS = "portability"
BUCKET = "exports"


class Export(Document):
    workspace = StringField(required=True)
    status = StringField(required=True)  # contract.STATUSES
    progress = DictField()  # {done, total}: steps (contract.TOTAL_STEPS)
    counts = DictField()  # items written, by kind
    errors = ListField(DictField())  # [{item, message}]
    requestedBy = DictField(null=True)  # common.auth.actor of who started it
    claim = StringField(null=True)  # the token of the worker running it (its writes check it)
    leaseUntil = DateTimeField(null=True)  # a running export whose lease passed is claimed again
    attempts = IntField(default=0)  # claims so far
    fileId = ObjectIdField(null=True)  # the zip in GridFS, once succeeded
    filename = StringField(null=True)
    sizeBytes = IntField(null=True)
    createdAt = DateTimeField(required=True)
    startedAt = DateTimeField(null=True)
    finishedAt = DateTimeField(null=True)
    COLLECTION = "exports"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("workspace", "-createdAt"), ("status", "leaseUntil")],
    }


MODELS = (Export,)
