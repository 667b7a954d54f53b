"""The domains service's collection: one document per workspace that ever set a domain.

The document outlives DELETE (status "none", no domain). The unique sparse index on ``domain`` is what
makes "one domain, one workspace" hold under concurrent claims: the second write fails.
"""

from mongoengine import DateTimeField, Document, IntField, ListField, StringField

ALIAS = "domains"


class DomainConfig(Document):
    slug = StringField(primary_key=True)  # the workspace
    domain = StringField()  # IDNA ASCII, lower case; absent when the status is "none"
    token = StringField()  # value the TXT record must hold; new for every domain set
    status = StringField(required=True)
    errors = ListField(StringField())  # problems found by the last check
    verifiedAt = DateTimeField(null=True)
    checkedAt = DateTimeField(null=True)
    nextCheckAt = DateTimeField(null=True)  # when the worker checks next; null: never
    deadline = DateTimeField(null=True)  # pending/broken until then, failed after
    attempts = IntField(default=0)  # failed checks since pending/broken began (backoff)
    inconclusive = IntField(default=0)  # lookups in a row that got no answer while verified
    updatedAt = DateTimeField()
    meta = {
        "db_alias": ALIAS,
        "collection": "domains",
        "indexes": [
            {"fields": ["domain"], "unique": True, "sparse": True},
            {"fields": ["nextCheckAt"], "sparse": True},
        ],
    }


MODELS = (DomainConfig,)
