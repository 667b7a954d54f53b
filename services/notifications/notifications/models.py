"""The notifications service's collections, declared with mongoengine (fields, defaults, indexes).

Read models of other services' posts and comments are built from their events (what a mail
needs: a title, a status, who wrote it), so a fan-out reads only this service's database.
"""

from mongoengine import BooleanField, DateTimeField, DictField, Document, StringField

ALIAS = "notifications"


class Post(Document):
    """A post as the posts service's events describe it: what a mail about it shows."""

    id = StringField(primary_key=True)  # the post's id
    workspace = StringField(required=True)
    title = StringField(required=True)
    status = DictField()  # {slug, name, color}
    moderationState = StringField(required=True)  # only an approved post is ever named to an end user
    mergedInto = StringField(null=True)
    authorId = StringField(null=True)  # the actor who wrote it (person:<id> when a person)
    updatedAt = DateTimeField(required=True)
    COLLECTION = "posts"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class Comment(Document):
    """Who wrote a comment, so a reply reaches its author."""

    id = StringField(primary_key=True)  # the comment's id
    workspace = StringField(required=True)
    postId = StringField(required=True)
    authorId = StringField(null=True)  # person:<id>, or None when no person wrote it
    at = DateTimeField(required=True)
    COLLECTION = "comments"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class Follow(Document):
    """A person following a post, or having stopped (``following`` false: never followed
    again automatically)."""

    workspace = StringField(required=True)
    postId = StringField(required=True)
    personId = StringField(required=True)  # person:<id>
    following = BooleanField(required=True)
    reason = StringField(required=True)  # contract: author, voter, commenter, chosen, merged
    at = DateTimeField(required=True)
    COLLECTION = "follows"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [{"fields": ["postId", "personId"], "unique": True}, ("postId", "following")],
    }


class Preferences(Document):
    """A person's choices in one workspace; absent: ``contract.DEFAULT_PREFERENCES``."""

    id = StringField(primary_key=True)  # "<workspace> <person:id>"
    workspace = StringField(required=True)
    personId = StringField(required=True)
    choices = DictField()  # only what the person changed
    updatedAt = DateTimeField(required=True)
    changelogSeenAt = DateTimeField(null=True)  # their last look at the changelog (the widget's unread badge)
    COLLECTION = "preferences"
    meta = {"db_alias": ALIAS, "collection": COLLECTION}


class StatusNotice(Document):
    """The status mail of a post: when its followers were last told, and a change held to be
    folded into one follow-up (``held``: {fromStatus, toStatus, eventId, actorId}; ``dueAt``)."""

    id = StringField(primary_key=True)  # the post's id
    workspace = StringField(required=True)
    lastSentAt = DateTimeField(null=True)
    held = DictField(null=True)
    dueAt = DateTimeField(null=True)
    COLLECTION = "status_notices"
    meta = {"db_alias": ALIAS, "collection": COLLECTION, "indexes": [{"fields": ["dueAt"], "sparse": True}]}


class DigestItem(Document):
    """One line of a team member's next digest."""

    workspace = StringField(required=True)
    personId = StringField(required=True)
    email = StringField(required=True)
    kind = StringField(required=True)  # contract: new_post, awaiting_moderation, new_comment
    postId = StringField(required=True)
    title = StringField(required=True)
    eventId = StringField(required=True)
    dueAt = DateTimeField(required=True)  # when the digest it belongs to goes out
    at = DateTimeField(required=True)
    COLLECTION = "digest_items"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        # A member's lines, when they leave the team.
        "indexes": [{"fields": ["eventId", "personId"], "unique": True}, ("dueAt",), ("workspace", "personId")],
    }


class Suppression(Document):
    """An address whose server refused this workspace's mail for good: not mailed again until
    an owner lifts it."""

    id = StringField(primary_key=True)  # "<workspace> <address>"
    workspace = StringField(required=True)
    address = StringField(required=True)
    reason = StringField(required=True)
    at = DateTimeField(required=True)
    COLLECTION = "suppressions"
    meta = {"db_alias": ALIAS, "collection": COLLECTION, "indexes": [("workspace", "at")]}


class ChangelogSubscription(Document):
    """An address that asked for the workspace's changelog by email: ``pending`` until the link
    of its confirmation mail is followed (double opt-in), then ``confirmed``. Unsubscribing
    deletes it; a pending one nobody confirms goes when its link expires (``expiresAt``)."""

    id = StringField(primary_key=True)  # "<workspace> <address>"
    workspace = StringField(required=True)
    address = StringField(required=True)  # user@domain in lower case (common.addresses.normalize_address)
    state = StringField(required=True)  # contract: pending, confirmed
    nonce = StringField(required=True)  # what a confirmation link names: a link of an earlier subscription confirms nothing
    personId = StringField(null=True)  # person:<id> when a signed-in person subscribed their own address
    # The language of the page the address subscribed from (its mails are in it; common.i18n);
    # a person's own subscription follows the person's choice instead.
    locale = StringField(null=True)
    createdAt = DateTimeField(required=True)
    confirmMailedAt = DateTimeField(null=True)  # the last confirmation mail (one per address per resend window)
    confirmedAt = DateTimeField(null=True)
    expiresAt = DateTimeField(null=True)  # pending only: when its confirmation link expires and it is deleted
    COLLECTION = "changelog_subscriptions"
    meta = {
        "db_alias": ALIAS,
        "collection": COLLECTION,
        "indexes": [
            # The fan-out of an entry pages through a workspace's confirmed addresses in order.
            ("workspace", "state", "address"),
            # The team's list, newest first; the per-workspace count of recent confirmation mails.
            ("workspace", "createdAt"),
            ("workspace", "confirmMailedAt"),
            {"fields": ["expiresAt"], "expireAfterSeconds": 0},
        ],
    }


MODELS = (Post, Comment, Follow, Preferences, StatusNotice, DigestItem, Suppression, ChangelogSubscription)
