"""The domains service's collection: one document per workspace that ever set a domain.

The document outlives DELETE (status "none", no domain). Claims do not own a name: any number of
workspaces may have the same domain pending, each with its own token. The partial unique index
on ``domain`` over verified documents is what makes "one verified domain, one workspace" hold
under concurrent checks: of two that verify one name at once, the second write fails.
"""

from mongoengine import DateTimeField, Document, IntField, ListField, StringField, get_db
from pymongo.errors import OperationFailure

from domains import contract

ALIAS = "domains"
VERIFIED_DOMAIN_INDEX = "verified_domain_unique"
# The index of earlier versions: unique over every claim, so whoever claimed a name first kept
# its real owner out. Dropped where it is found, or it would go on refusing them.
CLAIMED_DOMAIN_INDEX = "domain_1"
NOTHING_TO_DROP = (26, 27)  # NamespaceNotFound, IndexNotFound


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
    COLLECTION = "domains"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            {"fields": ["domain"], "unique": True, "name": VERIFIED_DOMAIN_INDEX,
             "partialFilterExpression": {"status": contract.VERIFIED}},
            {"fields": ["nextCheckAt"], "sparse": True},
        ],
    }

    @classmethod
    def ensure_indexes(cls):
        try:
            get_db(ALIAS)[cls.COLLECTION].drop_index(CLAIMED_DOMAIN_INDEX)
        except OperationFailure as ex:
            if ex.code not in NOTHING_TO_DROP:  # gone: another process dropped it, or it never was
                raise
        super().ensure_indexes()


MODELS = (DomainConfig,)
