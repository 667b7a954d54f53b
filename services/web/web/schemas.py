"""What the site accepts of a form or a query that it decides on itself.

Every other field of a form (a post's title, a comment's content...) is passed to ``/v1`` as
typed and validated there, once, by the service that owns it: the site does not repeat the API's
rules. Forms arrive as ``{name: text}`` (``application/x-www-form-urlencoded``), and carry fields
the site reads elsewhere (``csrf``, ``next``), so these schemas name only what they check.
"""

import re

# The board's ``?sort=`` choices and the API's sort each one lists by (trending: the most votes
# of the last two weeks first).
SORTS = {"top": "top", "trending": "trending", "new": "newest"}
DEFAULT_SORT = "top"
# What the team's board adds: the workspace's score formula (the API lists by it for the team only).
TEAM_SORTS = {**SORTS, "score": "score"}
# Deepest ``?offset=`` of the board's paging (a larger one is read as this), and the characters of
# a search kept (``?q=``, a manager's ``?merge_q=``).
OFFSET_MAX = 10_000
SEARCH_MAX = 200

# The first board's form, offered to the team on the board and submit pages while the workspace has
# no board: which of the two it was sent from (``then``: the page it lands on, and is shown again
# with a refusal). Its name and slug are the API's to check; a slug left empty is made from the
# name (``shapes.slug_of``), at most ``BOARD_SLUG_MAX`` characters (the API's longest slug).
NEW_BOARD = {
    "type": "object",
    "properties": {"then": {"enum": ["board", "new"]}},
}
BOARD_SLUG_MAX = 48

# A credential (a sign-in link's token, an SSO token) goes into an HTTP header or a body:
# printable ASCII without spaces, or it is refused as input here rather than failing inside the
# HTTP client.
CREDENTIAL = re.compile(r"[\x21-\x7e]{1,8192}")
# The session cookie: a session token of the people service (``fbs_`` and URL-safe base64). A
# cookie of another form is cleared without asking the API.
SESSION_TOKEN = re.compile(r"fbs_[A-Za-z0-9_-]{16,200}")
# A session cookie lasts as long as the session at most, and never longer than browsers keep one.
COOKIE_MAX_SECONDS = 400 * 24 * 3600

MODERATION_STATES = ("approved", "pending", "rejected", "spam")
# A manager's triage form: which action, and for ``moderate`` the new state. The other actions'
# fields (``statusSlug``, ``intoPostId``, and ``fields``' owner, ETA, tags and custom fields) are
# the API's to check.
TRIAGE = {
    "type": "object",
    "properties": {"action": {"enum": ["status", "moderate", "merge", "unmerge", "fields"]}},
    "required": ["action"],
    "if": {"properties": {"action": {"const": "moderate"}}, "required": ["action"]},
    "then": {"properties": {"moderationState": {"enum": list(MODERATION_STATES)}}, "required": ["moderationState"]},
}

# The triage form's field names (``action=fields``): a tag's box is ``tag.<slug>``, a custom
# field's input ``field.<key>`` (a multiselect's boxes ``field.<key>.<n>``, each valued with its
# option), and ``fieldKeys`` lists the fields the form showed (comma-separated), so a field the
# form did not show (one added meanwhile) is left as it is. Names are unique: the site reads a
# form as one value per name.
TAG_PREFIX = "tag."
FIELD_PREFIX = "field."
# A tag's slug and a field's key as the posts service allows them: only such a slug is written
# into a stylesheet's class name, and only such keys are read from ``fieldKeys``.
TRIAGE_KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
# A tag's colour written into CSS: exactly ``#rrggbb`` (the API promises it; the site checks).
TAG_COLOR = re.compile(r"#[0-9a-fA-F]{6}")

# The duplicates page's forms on one suggestion: merge the pair, or say they are not duplicates.
SUGGESTION = {
    "type": "object",
    "properties": {"action": {"enum": ["accept", "dismiss"]}},
    "required": ["action"],
}
# A suggestion's id in the page's form address (the API's ids are hex; another is not sent).
SUGGESTION_ID = re.compile(r"[0-9a-f]{24}")
# The open suggestions the page lists (the API's most).
SUGGESTIONS_LIMIT = 200

# A team member's roles (the people service's), offered by the team page's forms.
ROLES = ("owner", "manager")
# The team page's form on one member: change the role (``role``, the API's to check) or remove.
TEAM_MEMBER = {
    "type": "object",
    "properties": {"action": {"enum": ["role", "remove"]}},
    "required": ["action"],
}

# The post page's follow button: follow (``true``) or stop following (``false``).
FOLLOW = {
    "type": "object",
    "properties": {"following": {"enum": ["true", "false"]}},
    "required": ["following"],
}
# The notification preferences the page offers as checkboxes (an unticked box is not sent: it
# is read as off), and a team member's pace of team activity (the notifications service's
# values, offered by the page's select; the API checks it).
NOTIFICATION_CHOICES = ("statusChanges", "replies", "merges", "changelog", "autoFollow")
TEAM_ACTIVITY = ("instant", "daily", "weekly", "off")
# The preferences page's forms: save the choices, or stop (and start again) every mail of the
# workspace.
NOTIFICATIONS = {
    "type": "object",
    "properties": {"action": {"enum": ["save", "unsubscribe", "resubscribe"]}},
    "required": ["action"],
}
# A mail's unsubscribe token, of the form the API accepts (signed there; checked there).
UNSUBSCRIBE_TOKEN = re.compile(r"[A-Za-z0-9_.-]{10,1000}")
