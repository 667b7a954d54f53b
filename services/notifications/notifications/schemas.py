"""Request bodies the notifications service accepts (JSON Schema, strict)."""

from common import i18n
from common.validation import choice, integer, obj, string
from notifications.contract import KINDS, SUBSCRIPTIONS_LIMIT, SUPPRESSIONS_LIMIT, TEAM_PACES

FOLLOW = obj({"following": {"type": "boolean", "description": "true: follow the post; false: stop (never followed again automatically)"}},
             required=("following",))
PREFERENCES = obj(
    {
        **{kind: {"type": "boolean"} for kind in KINDS},
        "autoFollow": {"type": "boolean", "description": "follow the posts you write, vote on or comment on"},
        "teamActivity": choice(TEAM_PACES, description="team members: new posts, posts awaiting moderation and comments, "
                                                       "as they come, in a daily or weekly digest, or never"),
        "unsubscribed": {"type": "boolean", "description": "true: no mail at all from this workspace (false: mail again)"},
    }
)
UNSUBSCRIBE = obj({"token": string(1000, 10, pattern=r"^[A-Za-z0-9_.-]+$", description="the token of a mail's unsubscribe link")},
                  required=("token",))
SUPPRESSIONS_PAGE = integer(1, SUPPRESSIONS_LIMIT[1], SUPPRESSIONS_LIMIT[0])

# The changelog by email (notifications.subscriptions).
SUBSCRIBE = obj({"email": string(254, 3, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
                                 description="the address to send the changelog to; it gets a link to confirm"),
                 # The translators' pseudo-locale too: a page shown in it subscribes in it.
                 "locale": choice((*i18n.LOCALES, i18n.PSEUDO),
                                  description="the language of the page subscribing: its mails are in it "
                                              "(omitted: the workspace's default)")},
                required=("email",))
SUBSCRIPTION_TOKEN = obj({"token": string(1000, 10, pattern=r"^[A-Za-z0-9_.-]+$", description="the token of a subscription mail's link")},
                         required=("token",))
MY_SUBSCRIPTION = obj({"subscribed": {"type": "boolean", "description": "true: send me the changelog by email; false: stop"}},
                      required=("subscribed",))
SUBSCRIPTIONS_PAGE = integer(1, SUBSCRIPTIONS_LIMIT[1], SUBSCRIPTIONS_LIMIT[0])
