"""The web service's collection: signed-in sessions (expired ones removed by a TTL index)."""

from mongoengine import DateTimeField, Document, StringField

ALIAS = "web"


class Session(Document):
    sid = StringField(required=True, unique=True)  # sha256 of the cookie's random id
    kind = StringField(required=True, choices=("user", "manager"))
    workspace = StringField(required=True)
    # The SSO JWT or the manager's session API key, sealed with a key derived from the cookie's
    # id (web.sealing): the database alone never yields a credential. Never rendered.
    sealedCredential = StringField(required=True)
    # A manager session's API key id (not a secret), so sign-out can delete the key.
    grantId = StringField(null=True)
    csrf = StringField(required=True)
    createdAt = DateTimeField(required=True)
    expiresAt = DateTimeField(required=True)

    COLLECTION = "sessions"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["expiresAt"], "expireAfterSeconds": 0}],
    }


MODELS = (Session,)
