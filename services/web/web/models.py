"""The web service's collection: signed-in sessions (expired ones removed by a TTL index)."""

from mongoengine import DateTimeField, Document, StringField

ALIAS = "web"


class Session(Document):
    sid = StringField(required=True, unique=True)  # sha256 of the cookie's random id
    kind = StringField(required=True, choices=("user", "manager"))
    workspace = StringField(required=True)
    credential = StringField(required=True)  # the SSO JWT or the manager API key; never rendered
    csrf = StringField(required=True)
    createdAt = DateTimeField(required=True)
    expiresAt = DateTimeField(required=True)

    meta = {
        "db_alias": ALIAS,
        "collection": "sessions",
        "indexes": [{"fields": ["expiresAt"], "expireAfterSeconds": 0}],
    }


MODELS = (Session,)
