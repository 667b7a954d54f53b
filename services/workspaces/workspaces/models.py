"""The workspaces service's collections, declared with mongoengine.

Boards and statuses are embedded in their workspace: a workspace has few of each, they
are always read together, and one document makes every change atomic and its snapshot
event exact.
"""

from mongoengine import (
    BinaryField,
    BooleanField,
    DateTimeField,
    Document,
    EmbeddedDocument,
    EmbeddedDocumentField,
    EmbeddedDocumentListField,
    IntField,
    ListField,
    StringField,
)

from workspaces.contract import DEFAULT_KEY_ROLE

ALIAS = "workspaces"


class Board(EmbeddedDocument):
    id = StringField(required=True)
    slug = StringField(required=True)
    name = StringField(required=True)
    description = StringField(default="")
    archived = BooleanField(default=False)  # hidden from visitors, takes no new posts; its posts stay readable
    createdAt = DateTimeField(required=True)


class Status(EmbeddedDocument):
    slug = StringField(required=True)
    name = StringField(required=True)
    color = StringField(required=True)
    roadmap = BooleanField(default=True)
    closed = BooleanField(null=True)  # counts as closed (done with); unset: contract.CLOSED_STATUSES says


class WorkspaceSettings(EmbeddedDocument):
    primaryColor = StringField(default="#4f46e5")
    theme = StringField(default="light")
    hidePoweredBy = BooleanField(default=False)
    anonSubmit = BooleanField(default=False)
    anonVote = BooleanField(default=False)
    anonComment = BooleanField(default=False)
    authorVotes = BooleanField(default=True)  # a new post's author, if a person, is its first voter (posts service)
    hideCustomerNames = BooleanField(default=False)  # end users see no other end user's name (posts service)
    erasedUserContent = StringField(default="keep")  # an erased person's posts and comments: keep or delete (posts service)
    widgetOrigins = ListField(StringField(), default=list)  # pages allowed to embed the widget (services/widget)
    widgetPosition = StringField(default="bottom-right")  # the widget's launcher: bottom-right or bottom-left
    widgetLabel = StringField(default="Feedback")  # the launcher's words, its accessible name
    defaultLocale = StringField(default="en")  # the language where nobody's choice names an enabled one (common.i18n)
    locales = ListField(StringField(), null=True)  # the enabled languages; unset: every one the platform speaks
    brandVoice = StringField(default="")
    ssoSecret = StringField(null=True)  # sealed (common.secretbox): the platform reads it back to check tokens
    ssoRequireAud = BooleanField(default=False)  # set with every secret since tokens must carry ``aud``


class Workspace(Document):
    slug = StringField(primary_key=True)
    name = StringField(required=True)
    logo = StringField(null=True)
    settings = EmbeddedDocumentField(WorkspaceSettings, default=WorkspaceSettings)
    boards = EmbeddedDocumentListField(Board)  # in display order (a board's position is its index)
    statuses = EmbeddedDocumentListField(Status)  # in roadmap/display order
    customDomain = StringField(null=True)  # set from domain.verified events
    version = IntField(default=1)  # bumped on every change; snapshot consumers keep the newest
    createdAt = DateTimeField(required=True)
    COLLECTION = "workspaces"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}
    SEALED = ("settings.ssoSecret",)  # what ``feedback reseal-secrets`` rewrites


class ApiKey(Document):
    keyId = StringField(required=True)
    workspace = StringField(required=True)
    name = StringField(required=True)
    role = StringField(required=True, default=DEFAULT_KEY_ROLE)
    hash = StringField(required=True)  # sha256 of the whole key; the key itself is never stored
    prefix = StringField(required=True)  # the first characters, to recognise a key in a list
    createdAt = DateTimeField(required=True)
    revokedAt = DateTimeField(null=True)
    expiresAt = DateTimeField(null=True)  # a grant's end (None: long-lived); the TTL index removes it then
    parentKeyId = StringField(null=True)  # the key that created this one (None: the operator or a member's session did)
    # Whose rights the key carries: the ``person:<id>`` of the team member whose session made it
    # (or made the key it derives from), "operator" for the operator's. Keys made before this
    # field existed have none: ``service.key_maker_of`` reads them conservatively.
    madeBy = StringField(null=True)
    # When the key last proved who it is (the platform's identity check), to the minute
    # (``contract.KEY_LAST_USED_PRECISION``); None: never since the field exists.
    lastUsedAt = DateTimeField(null=True)
    COLLECTION = "api_keys"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            {"fields": ["keyId"], "unique": True},
            ("workspace", "createdAt"),
            ("workspace", "parentKeyId"),  # revoking a key revokes those derived from it
            ("workspace", "madeBy"),  # a member who leaves the team takes their keys along
            ("workspace", "expiresAt"),  # the cap counts live long-lived keys and grants
            {"fields": ["expiresAt"], "expireAfterSeconds": 0},
        ],
    }


class Changelog(Document):
    workspace = StringField(required=True)
    title = StringField(required=True)
    slug = StringField(required=True)
    content = StringField(required=True)
    postIds = ListField(StringField())
    publishedAt = DateTimeField(null=True)
    createdAt = DateTimeField(required=True)
    importKey = StringField(null=True)  # an imported entry's ``<workspace>/<source>:<its id there>`` (workspaces.imports)
    COLLECTION = "changelogs"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            {"fields": ["workspace", "slug"], "unique": True},
            ("workspace", "-publishedAt", "-_id"),
            ("workspace", "-createdAt", "-_id"),
            {"fields": ["importKey"], "sparse": True},
        ],
    }


class Logo(Document):
    """A workspace's uploaded logo, apart from its workspace (whose snapshot events carry no image)."""

    slug = StringField(primary_key=True)
    contentType = StringField(required=True)
    data = BinaryField(required=True)
    hash = StringField(required=True)  # of ``data``: its ETag, and the ``?v=`` of the workspace's logo URL
    updatedAt = DateTimeField(required=True)
    COLLECTION = "logos"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


MODELS = (Workspace, ApiKey, Changelog, Logo)
