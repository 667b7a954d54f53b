"""The portability service's collections: one document per export job; the zip itself is a
GridFS file of the bucket ``exports`` in the same database (``exports.files``/``exports.chunks``)."""

from mongoengine import DateTimeField, DictField, Document, IntField, ListField, ObjectIdField, StringField

ALIAS = "portability"
BUCKET = "exports"
IMPORT_BUCKET = "imports"  # the files imports were sent (imports.files/imports.chunks)


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
    erasedAt = DateTimeField(null=True)  # its file deleted: it named a person who was erased (portability.erasure)
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


class Import(Document):
    """One import job: the file sent is kept in GridFS (``fileId``) until the job ends."""

    workspace = StringField(required=True)
    source = StringField(required=True)  # contract.SOURCES
    options = DictField()  # a CSV's column mapping ({field: column}) and preset
    status = StringField(required=True)  # contract.STATUSES
    progress = DictField()  # {done, total}: items written of those the first pass counted
    counts = DictField()  # items written, by kind (contract.IMPORT_KINDS)
    errors = ListField(DictField())  # [{item, message}], the first contract.IMPORT_ERRORS_KEPT
    errorCount = IntField(default=0)
    requestedBy = DictField(null=True)
    claim = StringField(null=True)
    leaseUntil = DateTimeField(null=True)
    attempts = IntField(default=0)
    fileId = ObjectIdField(null=True)
    filename = StringField(null=True)
    contentType = StringField(required=True)
    sizeBytes = IntField(required=True)
    createdAt = DateTimeField(required=True)
    startedAt = DateTimeField(null=True)
    finishedAt = DateTimeField(null=True)
    COLLECTION = "imports"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("workspace", "-createdAt"), ("status", "leaseUntil")],
    }


MODELS = (Export, Import)
