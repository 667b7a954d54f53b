"""Every database command of the notifications service.

The service and the notifier decide; this module knows where follows, preferences, the read
models of posts and comments, held status changes, digest lines and suppressed addresses live.
"""

from __future__ import annotations

from datetime import datetime

from pymongo import ASCENDING, ReturnDocument, UpdateOne
from pymongo.errors import DuplicateKeyError

from common.db import Store
from common.ids import now
from common.mail import MailQueue
from notifications import contract
from notifications.models import (ChangelogSubscription, Comment, DigestItem, Follow, Post, Preferences, StatusNotice,
                                  Suppression)


def preferences_id(slug: str, person_id: str) -> str:
    return f"{slug} {person_id}"


def suppression_id(slug: str, address: str) -> str:
    return f"{slug} {address}"


def subscription_id(slug: str, address: str) -> str:
    return f"{slug} {address}"


class NotificationsRepository:
    def __init__(self, store: Store):
        self.store = store
        self.posts = store.collection(Post)
        self.comments = store.collection(Comment)
        self.follows = store.collection(Follow)
        self.preferences = store.collection(Preferences)
        self.status_notices = store.collection(StatusNotice)
        self.digest_items = store.collection(DigestItem)
        self.suppressions = store.collection(Suppression)
        self.subscriptions = store.collection(ChangelogSubscription)

    # -- a person's data (notifications.erasure) ---------------------------------------------

    def kept_about(self, person_id: str, slug: str | None) -> dict:
        """What is kept about ``person_id`` (in ``slug``, or everywhere): follows and preferences."""
        here = {"workspace": slug} if slug else {}
        return {
            "follows": list(self.follows.find({"personId": person_id, **here}, {"_id": 0, "workspace": 1, "postId": 1,
                                                                             "following": 1, "reason": 1, "at": 1})),
            "preferences": list(self.preferences.find({"personId": person_id, **here}, {"_id": 0, "workspace": 1, "choices": 1,
                                                                                     "updatedAt": 1, "changelogSeenAt": 1})),
        }

    def by_address(self, collection: str, slug: str | None) -> list[dict]:
        """The suppressions or changelog subscriptions (``collection``) kept by address, to find
        an erased address among them by its digest."""
        kept = {"suppressions": self.suppressions, "subscriptions": self.subscriptions}[collection]
        return list(kept.find({"workspace": slug} if slug else {}, {"address": 1}))

    def subscriptions_of(self, person_id: str, slug: str | None) -> list[dict]:
        """The changelog subscriptions a person made of their own address while signed in."""
        return list(self.subscriptions.find({"personId": person_id, **({"workspace": slug} if slug else {})}, {"address": 1}))

    def forget_person(self, person_id: str, slug: str | None, suppressions: list, subscriptions: list) -> None:
        """Everything kept about ``person_id`` (in ``slug``, or everywhere) gone, with the
        suppressions and subscriptions of their address (by id)."""
        here = {"workspace": slug} if slug else {}
        for collection in (self.follows, self.preferences, self.digest_items):
            collection.delete_many({"personId": person_id, **here})
        self.subscriptions.delete_many({"$or": [{"personId": person_id, **here}, {"_id": {"$in": subscriptions}}]})
        self.suppressions.delete_many({"_id": {"$in": suppressions}})
        self.posts.update_many({"authorId": person_id, **here}, {"$set": {"authorId": None}})
        self.comments.update_many({"authorId": person_id, **here}, {"$set": {"authorId": None}})

    # -- read models of posts and comments ------------------------------------------------

    def keep_post(self, slug: str, post: dict, author_id: str | None = None) -> None:
        """Keep what a mail shows of ``post`` (an event's post shape)."""
        fields = {
            "workspace": slug,
            "title": post["title"],
            "status": post["status"],
            "moderationState": post["moderationState"],
            "mergedInto": (post.get("mergedInto") or {}).get("id"),
            "updatedAt": now(),
        }
        on_insert = {"authorId": author_id}
        self.posts.update_one({"_id": post["id"]}, {"$set": fields, "$setOnInsert": on_insert}, upsert=True)

    def forget_post(self, post_id: str) -> None:
        """The post was deleted: what a mail shows of it is kept no more (``deleted``: never named)."""
        self.posts.update_one({"_id": post_id}, {"$set": {"deleted": True, "updatedAt": now()}})

    def post(self, post_id: str) -> dict | None:
        return self.posts.find_one({"_id": post_id})

    def posts_by_id(self, ids: list[str]) -> dict[str, dict]:
        return {doc["_id"]: doc for doc in self.posts.find({"_id": {"$in": ids}})}

    def keep_comment(self, slug: str, comment_id: str, post_id: str, author_id: str | None) -> None:
        self.comments.update_one({"_id": comment_id},
                                 {"$setOnInsert": {"workspace": slug, "postId": post_id, "authorId": author_id, "at": now()}},
                                 upsert=True)

    def comment(self, comment_id: str) -> dict | None:
        return self.comments.find_one({"_id": comment_id})

    # -- follows --------------------------------------------------------------------------

    def follow_unless_decided(self, slug: str, post_id: str, person_id: str, reason: str) -> None:
        """Follow for ``reason`` unless the person already follows or chose to stop."""
        document = {"workspace": slug, "postId": post_id, "personId": person_id, "following": True, "reason": reason, "at": now()}
        try:
            self.follows.update_one({"postId": post_id, "personId": person_id}, {"$setOnInsert": document}, upsert=True)
        except DuplicateKeyError:
            pass  # two events of one person and post at once: the other wrote it

    def set_following(self, slug: str, post_id: str, person_id: str, following: bool) -> None:
        """The person's own choice (kept: a later vote does not undo an unfollow)."""
        change = {"workspace": slug, "following": following, "reason": contract.CHOSEN, "at": now()}
        try:
            self.follows.update_one({"postId": post_id, "personId": person_id}, {"$set": change}, upsert=True)
        except DuplicateKeyError:
            self.follows.update_one({"postId": post_id, "personId": person_id}, {"$set": change})

    def drop_automatic(self, post_id: str, person_id: str, reason: str) -> None:
        """Stop a follow that ``reason`` alone made (an unvote ends a follow its vote made)."""
        self.follows.delete_one({"postId": post_id, "personId": person_id, "reason": reason, "following": True})

    def following(self, post_id: str, person_id: str) -> bool:
        doc = self.follows.find_one({"postId": post_id, "personId": person_id}, projection={"following": 1})
        return bool(doc and doc["following"])

    def followers(self, post_ids: list[str]) -> list[tuple[str, str]]:
        """``(postId, personId)`` of everyone following one of ``post_ids``."""
        cursor = self.follows.find({"postId": {"$in": post_ids}, "following": True}, projection={"postId": 1, "personId": 1})
        return [(doc["postId"], doc["personId"]) for doc in cursor]

    def unfollowed(self, post_ids: list[str]) -> set[tuple[str, str]]:
        """``(postId, personId)`` of everyone who chose to stop following one of ``post_ids``."""
        cursor = self.follows.find({"postId": {"$in": post_ids}, "following": False}, projection={"postId": 1, "personId": 1})
        return {(doc["postId"], doc["personId"]) for doc in cursor}

    def follow_too(self, slug: str, post_id: str, person_ids: list[str], reason: str) -> None:
        """Make each of ``person_ids`` follow ``post_id`` unless they decided otherwise, in one round trip."""
        at = now()
        writes = [UpdateOne({"postId": post_id, "personId": p},
                            {"$setOnInsert": {"workspace": slug, "postId": post_id, "personId": p, "following": True,
                                              "reason": reason, "at": at}}, upsert=True) for p in person_ids]
        if writes:
            self.follows.bulk_write(writes, ordered=False)

    # -- preferences ----------------------------------------------------------------------

    def choices(self, slug: str, person_ids: list[str]) -> dict[str, dict]:
        """Each person's preferences in ``slug``: the defaults with their changes."""
        stored = {doc["personId"]: doc.get("choices", {})
                  for doc in self.preferences.find({"_id": {"$in": [preferences_id(slug, p) for p in person_ids]}})}
        return {p: {**contract.DEFAULT_PREFERENCES, **stored.get(p, {})} for p in person_ids}

    def change_choices(self, slug: str, person_id: str, changes: dict) -> dict:
        self.preferences.update_one(
            {"_id": preferences_id(slug, person_id)},
            {"$set": {**{f"choices.{k}": v for k, v in changes.items()}, "workspace": slug, "personId": person_id, "updatedAt": now()}},
            upsert=True,
        )
        return self.choices(slug, [person_id])[person_id]

    def changelog_seen(self, slug: str, person_id: str):
        doc = self.preferences.find_one({"_id": preferences_id(slug, person_id)}, projection={"changelogSeenAt": 1})
        return (doc or {}).get("changelogSeenAt")

    def see_changelog(self, slug: str, person_id: str, at):
        """Their last look is ``at``, unless a later one was kept (two devices at once): the one
        kept now."""
        doc = self.preferences.find_one_and_update(
            {"_id": preferences_id(slug, person_id)},
            {"$max": {"changelogSeenAt": at}, "$setOnInsert": {"workspace": slug, "personId": person_id, "updatedAt": at}},
            projection={"changelogSeenAt": 1}, upsert=True, return_document=ReturnDocument.AFTER)
        return doc["changelogSeenAt"]

    # -- status mail of a post ------------------------------------------------------------

    def status_notice(self, post_id: str) -> dict | None:
        return self.status_notices.find_one({"_id": post_id})

    def status_sent(self, slug: str, post_id: str, at: datetime) -> None:
        self.status_notices.update_one({"_id": post_id}, {"$set": {"workspace": slug, "lastSentAt": at, "held": None, "dueAt": None}},
                                       upsert=True)

    def hold_status(self, post_id: str, held: dict, due: datetime) -> None:
        self.status_notices.update_one({"_id": post_id}, {"$set": {"held": held, "dueAt": due}})

    def held_due(self, at: datetime, limit: int = 100) -> list[dict]:
        return list(self.status_notices.find({"dueAt": {"$ne": None, "$lte": at}}).sort("dueAt", ASCENDING).limit(limit))

    # -- digests --------------------------------------------------------------------------

    def add_digest_items(self, items: list[dict]) -> None:
        for item in items:
            try:
                self.digest_items.insert_one(item)
            except DuplicateKeyError:
                pass  # the event was handled before (a redelivery)

    def digest_items_due(self, at: datetime, limit: int = 5000) -> list[dict]:
        return list(self.digest_items.find({"dueAt": {"$lte": at}}).sort("at", ASCENDING).limit(limit))

    def drop_digest_items(self, ids: list) -> None:
        self.digest_items.delete_many({"_id": {"$in": ids}})

    def drop_member_digest_items(self, slug: str, person_id: str, until: datetime) -> int:
        """Drop the digest lines queued for ``person_id`` in ``slug`` up to ``until``; how many."""
        return self.digest_items.delete_many({"workspace": slug, "personId": person_id, "at": {"$lte": until}}).deleted_count

    # -- suppressed addresses -------------------------------------------------------------

    def suppress(self, slug: str, address: str, reason: str) -> None:
        self.suppressions.update_one(
            {"_id": suppression_id(slug, address)},
            {"$set": {"workspace": slug, "address": address, "reason": reason[:500], "at": now()}},
            upsert=True,
        )

    def suppressed(self, slug: str, addresses: list[str]) -> set[str]:
        ids = [suppression_id(slug, a) for a in addresses]
        return {doc["address"] for doc in self.suppressions.find({"_id": {"$in": ids}}, projection={"address": 1})}

    def suppression_page(self, slug: str, limit: int, offset: int) -> list[dict]:
        return list(self.suppressions.find({"workspace": slug}).sort([("at", -1), ("_id", 1)]).skip(offset).limit(limit))

    def lift_suppression(self, slug: str, address: str) -> bool:
        return self.suppressions.delete_one({"_id": suppression_id(slug, address)}).deleted_count == 1

    def count_suppressed(self, slug: str) -> int:
        return self.suppressions.count_documents({"workspace": slug})

    # -- changelog subscriptions ------------------------------------------------------------

    def add_pending(self, slug: str, address: str, nonce: str, at: datetime, expires: datetime, locale: str | None = None) -> bool:
        """A new pending subscription of ``address``, in the language ``locale``; False when the
        address has one already (pending or confirmed), which is left as it is."""
        try:
            self.subscriptions.insert_one({"_id": subscription_id(slug, address), "workspace": slug, "address": address,
                                           "state": contract.PENDING, "nonce": nonce, "personId": None, "locale": locale,
                                           "createdAt": at, "confirmMailedAt": at, "confirmedAt": None, "expiresAt": expires})
            return True
        except DuplicateKeyError:
            return False

    def remail_pending(self, slug: str, address: str, before: datetime, at: datetime, expires: datetime,
                       locale: str | None = None) -> dict | None:
        """The pending subscription of ``address`` whose last confirmation mail was sent before
        ``before``, marked mailed ``at`` (its link now lasting until ``expires``) and now in the
        language ``locale`` (the page asked from last); None when there is none (confirmed, or
        mailed since ``before``: two requests at once mail once)."""
        claimed = self.subscriptions.update_one(
            {"_id": subscription_id(slug, address), "state": contract.PENDING, "confirmMailedAt": {"$lt": before}},
            {"$set": {"confirmMailedAt": at, "expiresAt": expires, "locale": locale}})
        return self.subscriptions.find_one({"_id": subscription_id(slug, address)}) if claimed.modified_count else None

    def confirmations_since(self, slug: str, since: datetime) -> int:
        """Subscriptions of ``slug`` last mailed a confirmation since ``since``."""
        return self.subscriptions.count_documents({"workspace": slug, "confirmMailedAt": {"$gte": since}})

    def confirm_subscription(self, slug: str, address: str, nonce: str, at: datetime) -> bool:
        """Confirm the subscription the link of ``nonce`` was sent for; True when it is confirmed
        (now or before), False when there is none (unsubscribed since, or expired)."""
        key = {"_id": subscription_id(slug, address), "nonce": nonce}
        self.subscriptions.update_one({**key, "state": contract.PENDING},
                                      {"$set": {"state": contract.CONFIRMED, "confirmedAt": at, "expiresAt": None}})
        return self.subscriptions.count_documents({**key, "state": contract.CONFIRMED}, limit=1) == 1

    def subscribe_confirmed(self, slug: str, address: str, person_id: str, nonce: str, at: datetime) -> None:
        """``address`` confirmed at once: a signed-in person's own (pending or not before)."""
        self.subscriptions.update_one(
            {"_id": subscription_id(slug, address)},
            {"$set": {"workspace": slug, "address": address, "state": contract.CONFIRMED, "personId": person_id,
                      "confirmedAt": at, "expiresAt": None},
             "$setOnInsert": {"nonce": nonce, "createdAt": at, "confirmMailedAt": None}},
            upsert=True)

    def subscription(self, slug: str, address: str) -> dict | None:
        return self.subscriptions.find_one({"_id": subscription_id(slug, address)})

    def drop_subscription(self, slug: str, address: str) -> bool:
        return self.subscriptions.delete_one({"_id": subscription_id(slug, address)}).deleted_count == 1

    def confirmed_subscribers(self, slug: str, after: str, limit: int) -> list[dict]:
        """Up to ``limit`` confirmed subscriptions of ``slug`` after the address ``after``, in
        order of address (a fan-out's page): ``{address, locale, personId}`` each."""
        cursor = self.subscriptions.find({"workspace": slug, "state": contract.CONFIRMED, "address": {"$gt": after}},
                                         projection={"_id": 0, "address": 1, "locale": 1, "personId": 1})
        return list(cursor.sort("address", ASCENDING).limit(limit))

    def subscription_page(self, slug: str, limit: int, offset: int) -> list[dict]:
        return list(self.subscriptions.find({"workspace": slug}).sort([("createdAt", -1), ("_id", 1)]).skip(offset).limit(limit))

    def count_subscriptions(self, slug: str) -> dict[str, int]:
        return {state: self.subscriptions.count_documents({"workspace": slug, "state": state})
                for state in (contract.CONFIRMED, contract.PENDING)}

    # -- delivery -------------------------------------------------------------------------

    @staticmethod
    def count_mail(queue: MailQueue, slug: str) -> dict[str, int]:
        """The workspace's messages in ``queue`` by state, and how many needed more than one try
        (``retried``)."""
        # The queue (common.mail) counts nothing by workspace, so its documents are read here.
        counts = {"queued": 0, "sent": 0, "failed": 0, "retried": 0}
        for doc in queue.collection.find({"workspace": slug}, projection={"state": 1, "attempts": 1}):
            counts[doc["state"]] = counts.get(doc["state"], 0) + 1
            counts["retried"] += doc.get("attempts", 0) > 1
        return counts
