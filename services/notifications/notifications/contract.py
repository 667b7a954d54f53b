"""What the notifications service owns and consumes (it publishes nothing)."""

# The people service's feedback.people: a member removed from a team hears nothing more of it
# (their queued digest lines and team mail are withdrawn).
PEOPLE_TOPIC = "feedback.people"
MEMBER_REMOVED = "member.removed"
CONSUMES = ("feedback.posts", "feedback.workspaces", PEOPLE_TOPIC)
PERSON_ERASED = "person.erased"  # people.privacy: notifications.erasure forgets them

# What a mail is about: each kind can be turned off in a person's preferences.
STATUS_CHANGES = "statusChanges"  # a post you follow changed status
REPLIES = "replies"  # the team answered on a post you follow; someone answered your comment
MERGES = "merges"  # a post you follow was merged into another (your vote moved)
CHANGELOG = "changelog"  # a changelog entry shipped posts you follow
KINDS = (STATUS_CHANGES, REPLIES, MERGES, CHANGELOG)

# Team members hear of new posts, posts awaiting moderation and new comments at this pace.
INSTANT, DAILY, WEEKLY, OFF = "instant", "daily", "weekly", "off"
TEAM_PACES = (INSTANT, DAILY, WEEKLY, OFF)

# A person's preferences in a workspace until they change them.
DEFAULT_PREFERENCES = {
    **{kind: True for kind in KINDS},
    "autoFollow": True,  # follow the posts you write, vote on or comment on
    "teamActivity": INSTANT,  # team members only
    "unsubscribed": False,  # the one-click switch: nothing at all from this workspace
}

# Why someone follows a post (an explicit unfollow is kept too: it is never undone by a vote).
AUTHOR, VOTER, COMMENTER, CHOSEN, MERGED = "author", "voter", "commenter", "chosen", "merged"

# What team activity a digest lists.
NEW_POST, AWAITING_MODERATION, NEW_COMMENT = "new_post", "awaiting_moderation", "new_comment"

# Suppressed addresses one page lists (default, maximum).
SUPPRESSIONS_LIMIT = (50, 200)

# Changelog subscriptions by email (anyone, double opt-in): an address is pending until the
# link of its confirmation mail is followed.
PENDING, CONFIRMED = "pending", "confirmed"
# Subscriptions one page of the team's list holds (default, maximum).
SUBSCRIPTIONS_LIMIT = (50, 200)
