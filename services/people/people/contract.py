"""What the people service owns, publishes and consumes."""

from common.auth import ACTOR_SCHEMA
from common.claims import COMPANIES
from common.validation import ID, TEXT, TIMESTAMP, nullable, shape

TOPIC = "feedback.people"
# feedback.posts: deletions of posts and comments, which the audit log keeps.
CONSUMES = ("feedback.workspaces", "feedback.posts", "feedback.portability")

MEMBER_JOINED = "member.joined"
MEMBER_ROLE_CHANGED = "member.role_changed"
MEMBER_REMOVED = "member.removed"
# An SSO token says its user belongs to other companies than its last one did (the companies
# service keeps them: docs/services/companies.md).
COMPANIES_CLAIMED = "user.companies_claimed"
# A person (or, in one workspace, an end user) was erased: every service that keeps data about
# them removes it (docs/privacy.md). ``workspace`` null: everywhere. ``addressDigest``: the
# keyed digest of their address (common.addresses.address_digest), for what is kept by address;
# null for an SSO user without one. The address itself never travels.
PERSON_ERASED = "person.erased"

MEMBER = shape(
    {
        "person": shape({"id": ID, "email": TEXT, "name": TEXT}),
        "role": TEXT,
        "actor": ACTOR_SCHEMA,
        "at": TIMESTAMP,
    }
)

# Every event on feedback.people and the JSON schema of its ``data``.
EVENTS = {
    MEMBER_JOINED: MEMBER,
    MEMBER_ROLE_CHANGED: MEMBER,
    MEMBER_REMOVED: MEMBER,
    COMPANIES_CLAIMED: shape({"userId": TEXT, "companies": COMPANIES}),
    PERSON_ERASED: shape({"userId": TEXT, "workspace": nullable(TEXT), "addressDigest": nullable(TEXT),
                          "actor": ACTOR_SCHEMA, "at": TIMESTAMP}),
}

# A team member's roles: an owner manages members too; the last owner stays.
ROLES = ("owner", "manager")

# Sign-in methods a workspace may offer its end users (team members may use any).
METHODS = ("email", "oidc", "passkey")
DEFAULT_END_USER_METHODS = ("email", "passkey")

# A session token says what it is, so the identity check knows it without a lookup elsewhere.
SESSION_PREFIX = "fbs_"
TOKEN_BYTES = 32  # of every secret this service hands out: session tokens, links, invitations

# Audit log entry types (what the log records).
AUDIT_TYPES = (
    "sign_in", "sign_out", "sign_out_everywhere", "invitation.created", "invitation.revoked",
    "invitation.accepted", "member.role_changed", "member.removed", "api_key.created", "api_key.revoked",
    "settings.changed", "sign_in_settings.changed", "passkey.registered", "passkey.removed",
    "post.deleted", "comment.deleted",
)
# Events of other services the audit log keeps, by the entry type it records them as.
AUDITED_EVENTS = {
    "api_key.created": "api_key.created",
    "api_key.revoked": "api_key.revoked",
    "workspace.settings_changed": "settings.changed",
    # A post or comment deleted (soft: docs/services/posts.md, "Deleting and editing"): by its
    # author or by the team, who may want to know who removed what.
    "post.deleted": "post.deleted",
    "comment.deleted": "comment.deleted",
    # A workspace's data taken away (the portability service): who started an export.
    "export.created": "export.created",
    # ... and brought in: who imported a file, and how it ended.
    "import.finished": "import.finished",
}
AUDIT_LIMIT = (50, 200)  # default, maximum entries of one page

# OpenID Connect: a workspace's provider was configured or removed (people.oidc).
AUDIT_TYPES += ("oidc.changed",)
# A workspace's export was started (the portability service's export.created).
AUDIT_TYPES += ("export.created",)
# An import into the workspace ended (the portability service's import.finished).
AUDIT_TYPES += ("import.finished",)
# A person erased, themself or by an owner (people.privacy): recorded with their id only.
AUDIT_TYPES += ("person.erased",)
# What "Deleted user" stands for where an erased person's id was kept (audit actors).
ERASED_NAME = "Deleted user"
