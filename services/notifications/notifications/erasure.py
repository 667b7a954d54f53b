"""A person's data in the notifications service (docs/privacy.md): their follows and
preferences for their download (``POST /internal/notifications/personal-data``), and, when
``person.erased`` comes (people.privacy), all of it gone: follows, preferences, digest lines,
changelog subscriptions, suppressions of their address, and their mail, queued or sent (to
them as a person, and to their address as a subscriber).

What is kept by address (suppressions, subscriptions) is found by the event's keyed digest of
the address (common.addresses.address_digest): the address itself never travels. Mail is
found by its key, which names the person it was for (notifications.notifier)."""

from __future__ import annotations

import logging
import re

from common.addresses import address_digest
from common.ids import iso
from common.mail import MailQueue
from notifications.repository import NotificationsRepository

log = logging.getLogger(__name__)


class Erasure:
    def __init__(self, repo: NotificationsRepository, queue: MailQueue, secret: str):
        self.repo = repo
        self.queue = queue
        self.secret = secret

    def data_of(self, user: str, slug: str | None) -> dict:
        kept = self.repo.kept_about(user, slug)
        return {
            "follows": [{**f, "at": iso(f.get("at"))} for f in kept["follows"]],
            "preferences": [{**p, "updatedAt": iso(p.get("updatedAt")), "changelogSeenAt": iso(p.get("changelogSeenAt"))}
                            for p in kept["preferences"]],
        }

    def erase(self, data: dict) -> None:
        user, slug, digest = data["userId"], data["workspace"], data.get("addressDigest")

        def matching(collection: str) -> list[dict]:
            if not digest:
                return []
            return [doc for doc in self.repo.by_address(collection, slug) if _digest(self.secret, doc.get("address")) == digest]

        suppressed, subscribed = matching("suppressions"), matching("subscriptions")
        subscribed += self.repo.subscriptions_of(user, slug)  # their own address, subscribed signed in
        self.repo.forget_person(user, slug, [d["_id"] for d in suppressed], [d["_id"] for d in subscribed])
        # Mail to a person is keyed by their id; mail to an address (the changelog's
        # subscribers) is found by the address its subscription held.
        mails = self.queue.forget_keys(f":{re.escape(user)}$")
        for address in {d["address"] for d in (*suppressed, *subscribed) if d.get("address")}:
            mails += self.queue.forget_address(address, slug)
        log.info("erased %s in %s (%d mails)", user, slug or "every workspace", mails)


def _digest(secret: str, address: str | None) -> str | None:
    try:
        return address_digest(secret, address) if address else None
    except ValueError:
        return None  # not an address at all: no erased person's
