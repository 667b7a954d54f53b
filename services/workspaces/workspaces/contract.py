"""What the workspaces service owns, publishes and consumes."""

from common.auth import ACTOR_SCHEMA as ACTOR
from common.i18n import N_
from common.validation import BOOLEAN, ID, INTEGER, TEXT, TIMESTAMP, array, nullable, shape

TOPIC = "feedback.workspaces"
# The people service's events: a member who leaves the team takes the keys they made along.
PEOPLE_TOPIC = "feedback.people"
MEMBER_REMOVED = "member.removed"
DOMAINS_TOPIC = "feedback.domains"
CONSUMES = (DOMAINS_TOPIC, PEOPLE_TOPIC)

WORKSPACE_CREATED = "workspace.created"
WORKSPACE_UPDATED = "workspace.updated"
CHANGELOG_PUBLISHED = "changelog.published"
# What the audit log (people service) hears of: who made or revoked a key, who changed what.
API_KEY_CREATED = "api_key.created"
API_KEY_REVOKED = "api_key.revoked"
WORKSPACE_SETTINGS_CHANGED = "workspace.settings_changed"

# What other services keep of a workspace (no secrets): boards in display order (an archived
# one takes no new posts), statuses in display order,
# the status new posts get, the anonymous flags, and whether a new post's author votes for it
# (``authorVotes``), and whether end users' names are hidden from other end users
# (``hideCustomerNames``). ``version`` grows with every change.
SNAPSHOT = shape(
    {
        "slug": TEXT,
        "name": TEXT,
        "version": INTEGER,
        "boards": array(shape({"id": TEXT, "name": TEXT, "slug": TEXT, "archived": BOOLEAN})),
        "statuses": array(
            shape({"slug": TEXT, "name": TEXT, "color": TEXT, "order": INTEGER, "roadmap": BOOLEAN, "closed": BOOLEAN})
        ),
        "defaultStatus": nullable(TEXT),
        "anonSubmit": BOOLEAN,
        "anonVote": BOOLEAN,
        "anonComment": BOOLEAN,
        "authorVotes": BOOLEAN,
        "hideCustomerNames": BOOLEAN,
        "erasedUserContent": TEXT,
    }
)
# What becomes of an erased person's posts and comments (the posts service: posts.erasure).
ERASED_USER_CONTENT = ("keep", "delete")
CHANGELOG = shape(
    {
        "id": ID,
        "title": TEXT,
        "slug": TEXT,
        "content": TEXT,
        "publishedAt": nullable(TIMESTAMP),
        "postIds": array(ID),
        "createdAt": TIMESTAMP,
    }
)

# Every event on feedback.workspaces and the JSON schema of its ``data``. ``actor``: who did it
# (common.auth.actor: a signed-in person, an API key, the operator). Snapshots name nobody: a
# domain's verification changes a workspace too, and read models keep only the state.
EVENTS = {
    WORKSPACE_CREATED: SNAPSHOT,
    WORKSPACE_UPDATED: SNAPSHOT,
    CHANGELOG_PUBLISHED: shape({**CHANGELOG["properties"], "actor": ACTOR}),
    API_KEY_CREATED: shape({"id": TEXT, "name": TEXT, "role": TEXT, "expiresAt": nullable(TIMESTAMP), "actor": ACTOR}),
    API_KEY_REVOKED: shape({"id": TEXT, "name": TEXT, "actor": ACTOR}),
    # The names of what a manager changed, never the values (``ssoSecret`` is one): the
    # settings and workspace fields a PATCH set, or ``boards`` / ``statuses``.
    WORKSPACE_SETTINGS_CHANGED: shape({"fields": array(TEXT), "actor": ACTOR}),
}

# How many published changelog entries the agent context lists, newest first.
AGENT_CONTEXT_CHANGELOGS = 5

CHANGELOG_LIMIT = (20, 100)  # default, maximum entries of a changelog list

# Roles an API key can have, and the one a key gets unless asked otherwise.
# API key roles (common.auth): what a key may do. Keys made before roles existed are managers'.
KEY_ROLES = ("manager", "write", "read")
DEFAULT_KEY_ROLE = "manager"
# A key derived from another (``parentKeyId``) may not have a higher role than its parent.
KEY_ROLE_RANK = {"read": 0, "write": 1, "manager": 2}
# Who made a key (``ApiKey.madeBy``) besides a member's ``person:<id>``: the operator, or, for a
# key made before makers were kept, nobody known (a manager then, never an owner).
OPERATOR = "operator"
UNKNOWN_MAKER = "unknown"

# A grant is a key that expires (``expiresInSeconds``): a site keeps one in its session instead
# of the long-lived key it was derived from. Live keys per workspace are capped, so a leaked key
# cannot mint without end; revoked and expired keys do not count.
GRANT_SECONDS = (60, 86400)  # shortest and longest lifetime of a grant
MAX_LONG_LIVED_KEYS = 100
MAX_LIVE_GRANTS = 1000
# A key's ``lastUsedAt`` is written when the identity check sees it used and the stored time is
# older than this many seconds: at most one write a minute per key, none on most checks (the
# gateway also keeps a verdict AUTH_CACHE_SECONDS, so a busy key is checked rarely anyway).
KEY_LAST_USED_PRECISION = 60

THEMES = ("light", "dark", "system")
# A new post's author, if a person, counts as its first voter unless the team turns this off
# (as Canny and Fider count them); workspaces stored before the setting existed have it on.
AUTHOR_VOTES_DEFAULT = True

DEFAULT_STATUSES = (
    # slug, name, colour, shown on the roadmap, counts as closed. The names are stored in English
    # and marked for the catalogs: the pages show a status's name translated (``_(name)``), so the
    # defaults read in the reader's language while a team's own names stay as written.
    ("open", N_("Open"), "#64748b", True, False),
    ("under-review", N_("Under review"), "#f59e0b", True, False),
    ("planned", N_("Planned"), "#8b5cf6", True, False),
    ("in-progress", N_("In progress"), "#3b82f6", True, False),
    ("complete", N_("Complete"), "#22c55e", True, True),
    ("closed", N_("Closed"), "#ef4444", False, True),
)
DEFAULT_STATUS = "open"
# Statuses stored before ``closed`` existed count as closed when their slug is one of these.
CLOSED_STATUSES = ("complete", "closed")
# What a workspace's export reads of this service (POST /internal/workspaces/export).
EXPORT_KINDS = ("boards", "statuses", "changelogs", "settings")
# What an import writes here (POST /internal/workspaces/import, workspaces.imports).
IMPORT_KINDS = ("boards", "statuses", "changelogs", "settings")

# End-user SSO tokens (JWT, HS256 with the workspace's ssoSecret) must carry ``exp`` no further
# than this ahead (a stolen token is useful for a day at most), and name the workspace in ``aud``
# (optional for secrets set before ``aud`` was required: ``ssoRequireAud`` is unset on them);
# clocks may disagree by the leeway.
SSO_MAX_LIFETIME = 24 * 3600
SSO_CLOCK_LEEWAY = 60
# HS256 is as strong as its secret, and any end user holds a token to brute-force offline: a
# chosen secret has at least this many characters, a generated one (``"ssoSecret": "generate"``)
# 256 random bits.
SSO_SECRET_MIN_LENGTH = 32
SSO_SECRET_GENERATE = "generate"
SSO_GENERATED_BYTES = 32

# An uploaded logo (PUT /v1/workspaces/{slug}/logo): served from the database at
# GET /v1/workspaces/{slug}/logo, which the workspace's ``logo`` then names (with ``?v=`` its
# content's hash, so a browser fetches a new logo at once). SVG is refused: it is a document
# that can carry scripts, and no XML parser safe against hostile input is installed to clean it.
LOGO_TYPES = ("image/png", "image/jpeg", "image/webp", "image/svg+xml")
LOGO_MAX_BYTES = 512 * 1024  # the gateway's MAX_BODY_BYTES (256 KiB by default) applies first
LOGO_MIN_PIXELS = 16  # each side, raster images
LOGO_MAX_PIXELS = 1024
LOGO_MAX_AGE = 3600  # seconds a browser or a proxy keeps it before asking again (with its ETag)
# Served with every logo: no script, frame or plugin ever runs from it, whatever it holds.
LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'"
