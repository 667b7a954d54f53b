"""Who hears of what: the consumer's handlers and the scheduler's rounds.

Each event becomes at most one queued mail per person, under a key made of the event and the
person (``common.mail.MailQueue`` keeps a key once), so a redelivered event, a relay's retry or
a consumer killed midway through a fan-out queues nothing twice: handling an event again only
fills in what the first try did not reach. Recipients are chosen from this service's own
records (follows, preferences, suppressed addresses, read models of posts and comments); their
addresses are the people service's, asked in batches.

Nothing about a post that is not approved, or merged away, reaches an end user; a private
comment reaches the team alone, and the team is who the people service says it is when the mail
is decided: a digest is sent only to those still members when it falls due, and a member's
removal (``member.removed``) withdraws their queued digest lines and team mail.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable, Iterable

from common import auth
from common.ids import iso, now
from common.addresses import normalize_address
from common.mail import MailQueue
from notifications import contract, mail
from notifications.config import NotificationsConfig
from notifications.directory import Board, Directory
from notifications.mail import Addresser, Letter
from notifications.repository import NotificationsRepository

if TYPE_CHECKING:
    from notifications.subscriptions import ChangelogSubscriptions

log = logging.getLogger(__name__)

APPROVED = "approved"
# How the queue keys of team mail start (``team:<event>:<person>``, ``digest:<workspace>:<due>:<person>``):
# what is still queued of them is withdrawn when its person leaves the team.
TEAM_KEY, DIGEST_KEY = "team", "digest"


def person_of(actor: dict | None) -> str | None:
    """The person behind an event's actor (None: an API key, the operator, anonymous)."""
    actor_id = (actor or {}).get("id") or ""
    return actor_id if actor_id.startswith(auth.PERSON_PREFIX) else None


def listed(post: dict | None) -> bool:
    """Whether an end user may hear of ``post``: approved, not merged into another, not deleted."""
    return bool(post) and post.get("moderationState") == APPROVED and not post.get("mergedInto") and not post.get("deleted")


def next_digest(at: datetime, pace: str, hour: int) -> datetime:
    """When the digest of ``pace`` after ``at`` goes out: the next ``hour``:00 UTC (daily), on a
    Monday (weekly)."""
    at = at.astimezone(timezone.utc)
    due = at.replace(hour=hour, minute=0, second=0, microsecond=0)
    if due <= at:
        due += timedelta(days=1)
    if pace == contract.WEEKLY:
        due += timedelta(days=(7 - due.weekday()) % 7)
    return due


class Notifier:
    def __init__(self, repo: NotificationsRepository, directory: Directory, queue: MailQueue, addresser: Addresser,
                 config: NotificationsConfig, subscriptions: ChangelogSubscriptions | None = None):
        self.repo, self.directory, self.queue, self.addresser, self.config = repo, directory, queue, addresser, config
        self.subscriptions = subscriptions  # the changelog's subscribers by email (None: nobody but followers)

    def handlers(self) -> dict[str, Callable[[dict], None]]:
        """The handler of each event type this service acts on."""
        return {
            "post.created": self.post_created,
            "post.updated": self.post_changed,
            "post.unmerged": self.post_changed,
            "post.status_changed": self.status_changed,
            "post.merged": self.merged,
            "post.deleted": self.post_deleted,
            "comment.created": self.comment_created,
            "vote.created": self.voted,
            "vote.deleted": self.unvoted,
            "changelog.published": self.changelog_published,
            contract.MEMBER_REMOVED: self.member_removed,
        }

    def handle(self, event: dict) -> None:
        handler = self.handlers().get(event.get("type"))
        if handler is not None:
            handler(event)

    # -- events ---------------------------------------------------------------------------

    def post_created(self, event: dict) -> None:
        slug, data = event["workspace"], event["data"]
        post, author = data["post"], person_of(data.get("actor"))
        self.repo.keep_post(slug, post, author_id=(data.get("actor") or {}).get("id"))
        if author:
            self.auto_follow(slug, post["id"], author, contract.AUTHOR)
        kind = contract.NEW_POST if post["moderationState"] == APPROVED else contract.AWAITING_MODERATION
        self.tell_team(event, kind, post["id"], detail=post.get("content"), actor=author)

    def post_changed(self, event: dict) -> None:
        self.repo.keep_post(event["workspace"], event["data"]["post"])

    def post_deleted(self, event: dict) -> None:
        """A deleted post is named to nobody again (``listed``): no status, merge or changelog mail."""
        self.repo.forget_post(event["data"]["post"]["id"])

    def status_changed(self, event: dict) -> None:
        slug, data = event["workspace"], event["data"]
        post = data["post"]
        self.repo.keep_post(slug, post)
        if not data.get("notify", True) or not listed(self.repo.post(post["id"])):
            return
        notice = self.repo.status_notice(post["id"]) or {}
        last, fold = notice.get("lastSentAt"), timedelta(seconds=self.config.fold_seconds)
        if fold and last is not None and now() < _utc(last) + fold:
            # Told less than ``fold`` ago: hold this change, and fold any later one into it.
            held = notice.get("held") or {"fromStatus": data["oldStatus"]}
            held = {**held, "toStatus": data["newStatus"], "eventId": event["id"], "actorId": person_of(data.get("actor"))}
            self.repo.hold_status(post["id"], held, _utc(last) + fold)
            return
        self.tell_status(slug, post["id"], data["oldStatus"], data["newStatus"], event["id"], person_of(data.get("actor")))

    def tell_status(self, slug: str, post_id: str, old: dict, new: dict, key: str, actor: str | None) -> None:
        post = self.repo.post(post_id)
        if listed(post) and old.get("slug") != new.get("slug"):
            followers = {p for _, p in self.repo.followers([post_id])} - {actor}
            self.fan_out(slug, followers, contract.STATUS_CHANGES, f"status:{key}",
                         lambda board, person: mail.status_changed(board, post, old, new))
        self.repo.status_sent(slug, post_id, now())

    def merged(self, event: dict) -> None:
        slug, data = event["workspace"], event["data"]
        post, into = data["post"], data["into"]
        self.repo.keep_post(slug, post)
        self.repo.keep_post(slug, into)
        followers = {p for _, p in self.repo.followers([post["id"]])}
        # They follow the canonical post now (unless they chose not to), where their vote went.
        self.repo.follow_too(slug, into["id"], sorted(followers), contract.MERGED)
        merged_post, canonical = self.repo.post(post["id"]), self.repo.post(into["id"])
        if merged_post and listed(canonical):
            actor = person_of(data.get("actor"))
            self.fan_out(slug, followers - {actor}, contract.MERGES, f"merged:{event['id']}",
                         lambda board, person: mail.merged(board, merged_post, canonical))

    def comment_created(self, event: dict) -> None:
        slug, data = event["workspace"], event["data"]
        comment, author = data["comment"], person_of(data.get("actor"))
        post_id = data["post"]["id"]
        self.repo.keep_comment(slug, comment["id"], post_id, author)
        private = comment.get("isPrivate", False)
        if author and not private:
            self.auto_follow(slug, post_id, author, contract.COMMENTER)
        team = self.tell_team(event, contract.NEW_COMMENT, post_id, detail=comment["content"], actor=author)
        post = self.repo.post(post_id)
        if private or not listed(post):
            return  # a private comment is the team's alone; a hidden post is never named to end users
        name = comment.get("authorName")
        everyone: set[str] = set()
        if comment.get("isTeamMember"):
            everyone = {p for _, p in self.repo.followers([post_id])}
        parent = self.repo.comment(comment["parentId"]) if comment.get("parentId") else None
        parent_author = parent.get("authorId") if parent else None
        # Team members heard of it as team activity; the comment's author needs no mail of it.
        skip = team | {author}
        if parent_author and parent_author not in skip:
            self.fan_out(slug, {parent_author}, contract.REPLIES, f"reply:{event['id']}",
                         lambda board, person: mail.reply(board, post, comment, name, to_your_comment=True))
        others = everyone - skip - {parent_author}
        self.fan_out(slug, others, contract.REPLIES, f"reply:{event['id']}",
                     lambda board, person: mail.reply(board, post, comment, name, to_your_comment=False))

    def voted(self, event: dict) -> None:
        person = event["data"]["userId"]
        if person.startswith(auth.PERSON_PREFIX):
            self.auto_follow(event["workspace"], event["data"]["postId"], person, contract.VOTER)

    def unvoted(self, event: dict) -> None:
        person = event["data"]["userId"]
        if person.startswith(auth.PERSON_PREFIX):
            self.repo.drop_automatic(event["data"]["postId"], person, contract.VOTER)

    def changelog_published(self, event: dict) -> None:
        """The followers and voters of the entry's posts hear which of theirs shipped; then
        every confirmed subscriber of the changelog gets the entry, unless that address was
        just mailed of it as a follower (one mail per address and entry)."""
        slug, entry = event["workspace"], event["data"]
        mailed: set[str] = set()
        shipped = self.tell_shipped(slug, entry, mailed)
        if self.subscriptions is not None:
            self.subscriptions.fan_out(slug, entry, sorted(shipped, key=lambda p: p["title"]), skip=mailed)

    def tell_shipped(self, slug: str, entry: dict, mailed: set[str]) -> list[dict]:
        """Mail the followers and voters of the entry's posts (adding their addresses to
        ``mailed``); the shipped posts an end user may hear of (``{_id, title}``)."""
        ids = entry.get("postIds") or []
        if not ids:
            return []
        # The posts and their voters are asked of the posts service: the votes' events travel on
        # another topic, and may not have reached this consumer yet.
        shipped = [p for p in self.directory.posts.voters(slug, ids) if p["listed"]]
        if not shipped:
            return []
        posts = {p["id"]: {"_id": p["id"], "title": p["title"]} for p in shipped}
        audience = set(self.repo.followers(sorted(posts)))
        voters = {(p["id"], v) for p in shipped for v in p["voters"]}
        stopped = self.repo.unfollowed(sorted(posts))
        fresh = {v for _, v in voters - audience - stopped}
        auto = self.repo.choices(slug, sorted(fresh))
        audience |= {(post, v) for post, v in voters - stopped - audience if auto[v]["autoFollow"]}
        theirs: dict[str, list[dict]] = defaultdict(list)
        for post_id, person in sorted(audience):
            theirs[person].append(posts[post_id])
        # One mail per person, listing every shipped post they follow or voted for (keyed by the
        # entry: a second publication of it mails nobody twice).
        self.fan_out(slug, set(theirs), contract.CHANGELOG, f"changelog:{entry['id']}",
                     lambda board, person: mail.shipped(board, entry, sorted(theirs[person], key=lambda p: p["title"])),
                     addressed=mailed)
        return list(posts.values())

    # -- following --------------------------------------------------------------------------

    def auto_follow(self, slug: str, post_id: str, person: str, reason: str) -> None:
        if self.repo.choices(slug, [person])[person]["autoFollow"]:
            self.repo.follow_unless_decided(slug, post_id, person, reason)

    # -- the team -------------------------------------------------------------------------

    def tell_team(self, event: dict, kind: str, post_id: str, detail: str | None, actor: str | None) -> set[str]:
        """Tell the team of new activity, each member at their pace; the members' ids."""
        slug = event["workspace"]
        members = {m["id"]: m for m in self.directory.people.team(slug)}
        post = self.repo.post(post_id)
        if not members or post is None:
            return set(members)
        choices = self.repo.choices(slug, sorted(members))
        instant, later = set(), []
        at = now()
        for person, member in members.items():
            pace = choices[person]["teamActivity"]
            if person == actor or choices[person]["unsubscribed"] or pace == contract.OFF:
                continue
            if pace == contract.INSTANT:
                instant.add(person)
            else:
                later.append({"workspace": slug, "personId": person, "email": member["email"], "kind": kind, "postId": post_id,
                              "title": post["title"], "eventId": event["id"], "at": at,
                              "dueAt": next_digest(at, pace, self.config.digest_hour)})
        self.repo.add_digest_items(later)
        self.fan_out(slug, instant, None, f"{TEAM_KEY}:{event['id']}", lambda board, person: mail.team_activity(board, kind, post, detail),
                     known={p: members[p] for p in instant})
        return set(members)

    def member_removed(self, event: dict) -> None:
        """A member left the team: withdraw what was queued for them as a member until then
        (digest lines, team mail not sent yet), so no mail held back by its pace or by an SMTP
        outage reaches them later. Safe to repeat (a redelivery finds nothing more). Lines that
        an event handled meanwhile queues from a team read made before the removal are not
        sent either: ``send_digests`` asks the team again. What was queued after the removal
        is left (a member who rejoined keeps it)."""
        data = event.get("data") or {}
        person_id = (data.get("person") or {}).get("id")
        if not person_id:
            return
        slug, person = event["workspace"], f"{auth.PERSON_PREFIX}{person_id}"
        until = _removed_at(data.get("at") or event.get("timestamp"))
        lines = self.repo.drop_member_digest_items(slug, person, until)
        letters = self.queue.withdraw(slug, f"^(?:{TEAM_KEY}|{DIGEST_KEY}):.*:{re.escape(person)}$", until)
        if lines or letters:
            log.info("notifications: %s left %s's team: %d digest lines and %d team mails withdrawn", person, slug, lines, letters)

    # -- the scheduler --------------------------------------------------------------------

    def send_held(self, at: datetime) -> int:
        """Send the follow-ups of held status changes that fell due; how many posts."""
        notices = self.repo.held_due(at)
        for notice in notices:
            held = notice["held"] or {}
            if not held:
                self.repo.status_sent(notice["workspace"], notice["_id"], notice.get("lastSentAt") or at)
                continue
            self.tell_status(notice["workspace"], notice["_id"], held["fromStatus"], held["toStatus"], held["eventId"],
                             held.get("actorId"))
        return len(notices)

    def send_digests(self, at: datetime) -> int:
        """Send every digest that fell due, one mail per member and workspace; how many.

        The team is asked again now (once per workspace of the round), not trusted from when the
        lines were queued: someone removed since gets nothing, whatever the order in which the
        removal's event and the lines' events arrived, and a member's address is the current one.
        The lines go either way."""
        items = self.repo.digest_items_due(at)
        groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for item in items:
            groups[(item["workspace"], item["personId"])].append(item)
        teams: dict[str, dict[str, dict]] = {}
        for (slug, person), lines in groups.items():
            if slug not in teams:
                teams[slug] = {m["id"]: m for m in self.directory.people.team(slug)}
            member = teams[slug].get(person)
            choices = self.repo.choices(slug, [person])[person]
            if member and not choices["unsubscribed"] and choices["teamActivity"] in (contract.DAILY, contract.WEEKLY):
                due = max(_utc(i["dueAt"]) for i in lines)
                known = {person: {"email": member["email"], "locale": member.get("locale")}}
                self.fan_out(slug, {person}, None, f"{DIGEST_KEY}:{slug}:{iso(due)}", lambda board, p: mail.digest(board, lines), known=known)
            self.repo.drop_digest_items([i["_id"] for i in lines])
        return len(groups)

    # -- delivery -------------------------------------------------------------------------

    def refused(self, document: dict, reason: str) -> None:
        """The SMTP server refused a message for good: stop mailing that address from its workspace."""
        if document.get("workspace"):
            address = normalize_address(document["to"])
            self.repo.suppress(document["workspace"], address, reason)
            log.warning("notifications: %s suppressed for workspace %s: %s", address, document["workspace"], reason)

    def fan_out(self, slug: str, persons: Iterable[str | None], kind: str | None, key: str,
                letter: Callable[[Board, str], Letter], known: dict[str, dict] | None = None,
                addressed: set[str] | None = None) -> int:
        """Queue ``letter`` for each of ``persons`` who wants mail of ``kind`` (None: team
        activity, whose pace the caller checked) from ``slug``: not unsubscribed, with an
        address (``known``, else the people service's) that is not suppressed, in their own
        language (the ``locale`` beside the address). Each message is
        keyed ``<key>:<person>``; ``addressed`` collects the addresses it is for (in lower case,
        queued now or before). How many were new."""
        persons = sorted(p for p in persons if p)
        if not persons:
            return 0
        choices = self.repo.choices(slug, persons)
        wanted = [p for p in persons if not choices[p]["unsubscribed"] and (kind is None or choices[p][kind])]
        addresses = known if known is not None else self.directory.people.persons(wanted)
        wanted = [p for p in wanted if p in addresses]
        suppressed = self.repo.suppressed(slug, [addresses[p]["email"] for p in wanted])
        if addressed is not None:
            addressed.update(addresses[p]["email"].lower() for p in wanted if addresses[p]["email"] not in suppressed)
        board = self.directory.board(slug)
        # Each in their own language: the people service's person (or team member) carries it.
        letters = ((self.addresser.message(board, letter(board, p), p, addresses[p]["email"], addresses[p].get("locale")),
                    f"{key}:{p}")
                   for p in wanted if addresses[p]["email"] not in suppressed)
        queued = 0
        batch: list = []
        for item in letters:
            batch.append(item)
            if len(batch) == self.config.enqueue_batch:
                queued += self.queue.enqueue_many(batch)
                batch = []
        queued += self.queue.enqueue_many(batch)
        return queued


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def _removed_at(stamp: str | None) -> datetime:
    """When a removal happened, from its event (now, for an event without a readable time)."""
    try:
        return _utc(datetime.fromisoformat(stamp)) if stamp else now()
    except ValueError:
        return now()
