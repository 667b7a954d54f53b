"""The companies service's collections, declared with mongoengine (fields and indexes)."""

from mongoengine import DateTimeField, DictField, Document, IntField, ListField, StringField

ALIAS = "companies"


class Company(Document):
    """One of a workspace's customer companies (``_id`` ``<slug> <companyId>``)."""

    id = StringField(primary_key=True)
    workspace = StringField(required=True)
    companyId = StringField(required=True)  # the workspace's own id for it
    name = StringField(required=True)
    spendCents = IntField(required=True)  # monthly spend in the currency's cents: sums stay exact
    plan = StringField(null=True)
    attributes = DictField()
    createdAt = DateTimeField(required=True)
    updatedAt = DateTimeField(required=True)
    COLLECTION = "companies"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        # The list, biggest spenders first.
        "indexes": [("workspace", "-spendCents", "companyId")],
    }


class Membership(Document):
    """The companies one user belongs to in one workspace (``_id`` ``<slug> <userId>``)."""

    id = StringField(primary_key=True)
    workspace = StringField(required=True)
    userId = StringField(required=True)
    companies = ListField(StringField())  # company ids
    updatedAt = DateTimeField(required=True)
    COLLECTION = "memberships"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        # A company's members, and every membership a deleted company leaves.
        "indexes": [("workspace", "companies", "userId")],
    }


MODELS = (Company, Membership)
