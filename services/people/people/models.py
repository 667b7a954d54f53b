"""The people service's collections, declared with mongoengine (fields, defaults, indexes).

New documents are built from these models (``common.db.new_document``); the repository reads
and writes them through pymongo (transactions, atomic claims of single-use links).

Secrets are never stored: a session token, a sign-in link and an invitation are kept as the
SHA-256 of the random value handed out (``people.tokens``), so a copy of the database signs
nobody in.
"""

from mongoengine import BinaryField, BooleanField, DateTimeField, DictField, Document, IntField, ListField, ObjectIdField, StringField

ALIAS = "people"


class Person(Document):
    """Someone with an account: one verified email address, across workspaces."""

    email = StringField(required=True)  # lower case; a link reached it, or a workspace's identity provider or SSO token vouched
    name = StringField(required=True)
    avatarUrl = StringField(null=True)
    locale = StringField(null=True)  # the language they chose (common.i18n); None: their browser's, the workspace's
    # Workspaces where this person ever signed in: there, a sign-in link to the address is asked
    # for by its holder, not a stranger (the cap on mail to strangers' addresses).
    signedInTo = ListField(StringField())
    createdAt = DateTimeField(required=True)
    updatedAt = DateTimeField(required=True)
    COLLECTION = "persons"
    meta = {"db_alias": ALIAS, "collection": COLLECTION, "indexes": [{"fields": ["email"], "unique": True}]}


class Membership(Document):
    """A person on a workspace's team; end users have none."""

    workspace = StringField(required=True)
    personId = ObjectIdField(required=True)
    role = StringField(required=True)  # contract.ROLES
    joinedAt = DateTimeField(required=True)
    COLLECTION = "memberships"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["workspace", "personId"], "unique": True}, ("personId",), ("workspace", "role")],
    }


class Team(Document):
    """One per workspace with members: every change of its members writes it, so two changes
    at once conflict and one retries (the last owner cannot be removed by two owners at once)."""

    slug = StringField(primary_key=True)
    version = IntField(default=0)
    COLLECTION = "teams"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class Invitation(Document):
    workspace = StringField(required=True)
    email = StringField(required=True)
    role = StringField(required=True)
    tokenHash = StringField(required=True)
    invitedBy = DictField(null=True)  # the actor ({id, name})
    # The member whose rights invited (``person:<id>``: their session, or a key they made); None
    # for the operator. The invitation holds only while that member is still an owner here.
    inviterPerson = StringField(null=True)
    createdAt = DateTimeField(required=True)
    expiresAt = DateTimeField(required=True)  # deleted a day after (TTL), accepted or not
    acceptedAt = DateTimeField(null=True)
    COLLECTION = "invitations"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            {"fields": ["tokenHash"], "unique": True},
            ("workspace", "email"),
            ("workspace", "createdAt"),  # the hourly cap on a team's invitations
            ("workspace", "inviterPerson"),  # a member who leaves takes their pending invitations along
            {"fields": ["expiresAt"], "expireAfterSeconds": 24 * 3600},
        ],
    }


class SignInLink(Document):
    """An emailed sign-in link, by the hash of its token."""

    tokenHash = StringField(primary_key=True)
    workspace = StringField(required=True)
    email = StringField(required=True)
    next = StringField(null=True)
    createdAt = DateTimeField(required=True)
    expiresAt = DateTimeField(required=True)
    usedAt = DateTimeField(null=True)
    COLLECTION = "sign_in_links"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["expiresAt"], "expireAfterSeconds": 3600}],
    }


class LinkRequest(Document):
    """One request for a sign-in link, kept for the per-address limit's window, whether or not
    a link was sent (known and unknown addresses count alike)."""

    email = StringField(required=True)
    workspace = StringField(null=True)  # where it was asked (None: before requests were kept per workspace)
    stranger = BooleanField(default=False)  # asked where the address never signed in
    at = DateTimeField(required=True)
    expiresAt = DateTimeField(required=True)
    COLLECTION = "link_requests"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("email", "workspace", "at"), ("email", "stranger", "at"), {"fields": ["expiresAt"], "expireAfterSeconds": 0}],
    }


class Session(Document):
    """A signed-in visitor of one workspace, by the hash of its token. A person's session, or
    (an SSO token without an email) a user the workspace's own app vouched for."""

    tokenHash = StringField(primary_key=True)
    workspace = StringField(required=True)
    personId = ObjectIdField(null=True)
    userId = StringField(required=True)  # person:<id>, or sso:<id>
    name = StringField(null=True)
    email = StringField(null=True)
    avatarUrl = StringField(null=True)
    role = StringField(null=True)  # the member's role when it began; None: an end user
    method = StringField(required=True)  # how it was signed in: email, invitation, oidc, passkey, sso
    # Whether the platform itself checked that this person holds the address: an emailed link,
    # an invitation mailed to it, or a passkey registered from such a session. An SSO token or a
    # workspace's own identity provider is that workspace's word only: such a session acts on
    # this workspace, never on the person's profile or sessions elsewhere. None: from before the
    # field (read by method: ``people.service.PROVEN_METHODS``).
    proven = BooleanField(null=True)
    createdAt = DateTimeField(required=True)
    lastSeenAt = DateTimeField(required=True)
    expiresAt = DateTimeField(required=True)  # absolute expiry (TTL)
    COLLECTION = "sessions"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [("personId", "workspace"), {"fields": ["expiresAt"], "expireAfterSeconds": 0}],
    }


class SignInSettings(Document):
    """How a workspace's end users may sign in (team members may use every method)."""

    slug = StringField(primary_key=True)
    endUserMethods = ListField(StringField())
    updatedAt = DateTimeField()
    COLLECTION = "sign_in_settings"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class AuditEntry(Document):
    workspace = StringField(required=True)
    type = StringField(required=True)  # contract.AUDIT_TYPES
    actor = DictField(null=True)  # {id, name}; None: the visitor was not yet signed in
    data = DictField()
    at = DateTimeField(required=True)
    COLLECTION = "audit_log"
    # A page of the log, newest first: all of it, or the entries of one type.
    meta = {"db_alias": ALIAS, "collection": COLLECTION, "indexes": [("workspace", "-at"), ("workspace", "type", "-at")]}


class Passkey(Document):
    """A WebAuthn credential a person registered on one workspace: its id and public key (no
    secret: the private key never leaves the authenticator). It signs in on that workspace only."""

    workspace = StringField(required=True)
    personId = ObjectIdField(required=True)
    credentialId = StringField(required=True)  # base64url, as browsers spell it
    publicKey = BinaryField(required=True)  # COSE-encoded
    signCount = IntField(default=0)  # the authenticator's counter when last used (0: it keeps none)
    transports = ListField(StringField())  # hints for the browser: internal, hybrid, usb...
    name = StringField(required=True)
    # What the session that registered it had, and all a sign-in with it gets: a team member's
    # session (``team``) lets it sign in with the member's role; a proven one (``Session.proven``)
    # makes proven sessions. An end user's passkey never opens a team session.
    team = BooleanField(default=False)
    proven = BooleanField(default=False)
    createdAt = DateTimeField(required=True)
    lastUsedAt = DateTimeField(null=True)
    COLLECTION = "passkeys"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["workspace", "credentialId"], "unique": True}, ("personId", "workspace")],
    }


class WebAuthnChallenge(Document):
    """A challenge handed to a browser for one ceremony, by its value: spent by the answer,
    gone after 5 minutes either way."""

    challenge = StringField(primary_key=True)  # base64url of the random bytes
    workspace = StringField(required=True)
    kind = StringField(required=True, choices=("registration", "authentication"))
    personId = ObjectIdField(null=True)  # registration: who registers
    sessionId = StringField(null=True)  # registration: the session it was asked from
    origin = StringField(required=True)  # the origin the answer must come from
    expiresAt = DateTimeField(required=True)
    COLLECTION = "webauthn_challenges"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["expiresAt"], "expireAfterSeconds": 0}],
    }


# -- OpenID Connect (people.oidc) -----------------------------------------------------------


class OidcProvider(Document):
    """A workspace's OpenID Connect provider: one per workspace."""

    slug = StringField(primary_key=True)
    issuer = StringField(required=True)  # as its discovery document names itself
    clientId = StringField(required=True)
    clientSecret = StringField(null=True)  # sealed (common.secretbox); None: a public client (PKCE alone)
    name = StringField(required=True)  # the sign-in button's label
    teamEmailDomain = StringField(null=True)  # team members sign in as such only from this domain
    updatedAt = DateTimeField(required=True)
    SEALED = ("clientSecret",)  # what ``feedback reseal-secrets`` rewrites
    COLLECTION = "oidc_providers"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class OidcState(Document):
    """A sign-in under way at the provider, by its ``state``: spent by the callback, once."""

    state = StringField(primary_key=True)
    workspace = StringField(required=True)
    nonce = StringField(required=True)
    codeVerifier = StringField(required=True)  # PKCE (S256): only this service can redeem the code
    redirectUri = StringField(required=True)
    next = StringField(null=True)
    expiresAt = DateTimeField(required=True)  # 10 minutes after it began (TTL)
    COLLECTION = "oidc_states"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["expiresAt"], "expireAfterSeconds": 0}],
    }


class CompaniesClaim(Document):
    """What a user's SSO token last said of their companies (``_id`` ``<slug> <userId>``): a
    digest, so only a change is published."""

    id = StringField(primary_key=True)
    digest = StringField(required=True)
    at = DateTimeField(required=True)
    COLLECTION = "companies_claims"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


MODELS = (CompaniesClaim, Person, Membership, Team, Invitation, SignInLink, LinkRequest, Session, SignInSettings, AuditEntry, Passkey,
          WebAuthnChallenge, OidcProvider, OidcState)
