"""The changelog by email, for anyone: an address asks (``POST .../changelog/subscriptions``),
gets one confirmation mail, and is subscribed once its link is followed (double opt-in); every
entry published after that reaches it, with a one-click unsubscribe (RFC 8058). A signed-in
person subscribes their own address in one step (``PUT .../me/changelog-subscription``): the
people service already knows it is theirs.

What an answer says never depends on whether the address was subscribed already (the same 202
for a new, a pending and a confirmed address), so the form tells nobody who reads a workspace's
changelog. Abuse is bounded three ways: the gateway's write budgets (per caller, per client
address) on the route; one confirmation mail per address per ``confirm_resend_seconds``; and
at most ``confirmations_per_hour`` confirmation mails per workspace (429 past it).

Mail goes the way every notification goes (``common.mail``'s queue, the ``mailer`` worker, the
workspace's branding, suppressed addresses skipped). It is in the language of the page the
address subscribed from (the body's ``locale``, kept with the subscription), a person's own
subscription in the person's own choice, else in the workspace's default (docs/languages.md).
"""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Iterable
from urllib.parse import urlencode

from common import auth
from common.addresses import parse_address
from common.directory import Workspaces
from common.errors import BadRequest, TooManyRequests
from common.ids import iso, now
from common.mail import MailQueue, Message
from common.validation import check
from notifications import contract, schemas, shapes
from notifications.config import NotificationsConfig
from notifications.directory import Board, Directory
from notifications.mail import excerpt, letters
from notifications.repository import NotificationsRepository
from notifications.service import require_person
from notifications.tokens import SubscriptionTokens

# The queue keys of this feature's mail (common.mail keeps a key once).
CONFIRM_KEY, ENTRY_KEY = "changelog-confirm", "changelog-entry"
FAN_OUT_PAGE = 1000  # confirmed addresses read (and their suppressions asked) per round trip
INVALID_CONFIRM = "this confirmation link is not valid, or has expired: subscribe again to get a new one"
INVALID_UNSUBSCRIBE = "this unsubscribe link is not valid for this workspace"

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_LINE_MARK = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+)", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__|`+)")


def plain(markdown: str) -> str:
    """What a mail quotes of an entry's markdown: its words, without the marks (headings,
    quotes, list bullets, emphasis, code ticks) and with a link's text for the link."""
    text = _LINK.sub(r"\1", _IMAGE.sub(r"\1", markdown or ""))
    return excerpt(_EMPHASIS.sub("", _LINE_MARK.sub("", text)))


def address_of(email: str) -> str:
    """``email`` as stored and compared (``user@domain`` in lower case); 400 for anything but
    one plain address (no display name, no list)."""
    try:
        parsed = parse_address(email)
    except ValueError:
        parsed = None
    if parsed is None or parsed.addr_spec != email.strip() or "." not in parsed.domain:
        raise BadRequest("'email' must be an email address, like name@example.com")
    return parsed.addr_spec.lower()


class ChangelogLetters:
    """The two mails of a subscription, written from ``templates/mail/changelog_*``."""

    def __init__(self, tokens: SubscriptionTokens):
        self.tokens = tokens
        self.letters = letters()

    def confirmation(self, board: Board, address: str, nonce: str, locale: str | None = None) -> Message:
        """``locale``: the language of the page that asked (None: the workspace's default)."""
        link = board.page("/changelog/confirm?" + urlencode({"token": self.tokens.confirm(board.slug, address, nonce)}))
        return self.letters.write("changelog_confirm", to=address, branding=board.branding, workspace=board.slug,
                                  locale=board.locale(locale), values={"confirm": link, "days": max(1, self.tokens.confirm_seconds // 86400),
                                          "changelog": board.page("/changelog")})

    def entry(self, board: Board, entry: dict, posts: list[dict], address: str, locale: str | None = None) -> Message:
        leave = board.page("/changelog/unsubscribe?" + urlencode({"token": self.tokens.unsubscribe(board.slug, address)}))
        return self.letters.write(
            "changelog_entry", to=address, branding=board.branding, workspace=board.slug, locale=board.locale(locale),
            values={"entry": entry, "excerpt": plain(entry.get("content", "")), "posts": posts,
                    "link": board.page(f"/changelog#{entry['slug']}"), "unsubscribe": leave},
            headers={"List-Unsubscribe": f"<{leave}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
        )


class ChangelogSubscriptions:
    def __init__(self, repo: NotificationsRepository, directory: Directory, workspaces: Workspaces,
                 letters: ChangelogLetters, queue: MailQueue, config: NotificationsConfig):
        self.repo, self.directory, self.workspaces = repo, directory, workspaces
        self.letters, self.queue, self.config = letters, queue, config

    # -- the API ----------------------------------------------------------------------------

    def subscribe(self, slug: str, body) -> dict:
        """Anyone asks for the changelog at an address: a confirmation mail, unless the address
        is subscribed, or was mailed one less than ``confirm_resend_seconds`` ago. The answer is
        the same either way."""
        fields = check(body, schemas.SUBSCRIBE)
        address, locale = address_of(fields["email"]), fields.get("locale")
        self.workspaces.require(slug)
        at = now()
        if self.repo.confirmations_since(slug, at - timedelta(hours=1)) >= self.config.confirmations_per_hour:
            raise TooManyRequests("this workspace has sent as many confirmation emails as it may this hour; try again later")
        expires = at + timedelta(seconds=self.config.confirm_seconds)
        nonce = secrets.token_urlsafe(12)
        if not self.repo.add_pending(slug, address, nonce, at, expires, locale):
            pending = self.repo.remail_pending(slug, address, at - timedelta(seconds=self.config.confirm_resend_seconds), at, expires,
                                               locale)
            if pending is None:
                return shapes.subscription_requested(slug, address)
            nonce = pending["nonce"]
        if not self.repo.suppressed(slug, [address]):  # its server refused this workspace's mail for good
            board = self.directory.board(slug)
            self.queue.enqueue(self.letters.confirmation(board, address, nonce, locale), key=f"{CONFIRM_KEY}:{slug}:{address}:{iso(at)}")
        return shapes.subscription_requested(slug, address)

    def confirm(self, slug: str, body) -> dict:
        who = self.letters.tokens.read_confirm(check(body, schemas.SUBSCRIPTION_TOKEN)["token"])
        if who is None or who[0] != slug or not self.repo.confirm_subscription(slug, who[1], who[2], now()):
            raise BadRequest(INVALID_CONFIRM)
        return shapes.subscription(slug, who[1], True)

    def unsubscribe(self, slug: str, body) -> dict:
        """A subscriber mail's one-click unsubscribe: no sign-in, the signed token says which
        address. Unsubscribing an address that is not subscribed (any more) is no error."""
        who = self.letters.tokens.read_unsubscribe(check(body, schemas.SUBSCRIPTION_TOKEN)["token"])
        if who is None or who[0] != slug:
            raise BadRequest(INVALID_UNSUBSCRIBE)
        self.repo.drop_subscription(slug, who[1])
        return shapes.subscription(slug, who[1], False)

    def mine(self, caller: auth.Caller, slug: str) -> dict:
        person, address = self._own_address(caller, slug)
        doc = self.repo.subscription(slug, address)
        return shapes.subscription(slug, address, bool(doc and doc["state"] == contract.CONFIRMED))

    def set_mine(self, caller: auth.Caller, slug: str, body) -> dict:
        """A signed-in person subscribes their own address, confirmed at once (it is the people
        service's address of theirs), or stops."""
        require_person(caller)  # who may, before what they sent
        subscribed = check(body, schemas.MY_SUBSCRIPTION)["subscribed"]
        person, address = self._own_address(caller, slug)
        if subscribed:
            self.repo.subscribe_confirmed(slug, address, person, secrets.token_urlsafe(12), now())
        else:
            self.repo.drop_subscription(slug, address)
        return shapes.subscription(slug, address, subscribed)

    def listing(self, caller: auth.Caller, slug: str, limit: int, offset: int) -> dict:
        """The team's view: how many addresses are confirmed and pending, and the addresses, newest first."""
        self.workspaces.require_manager(caller, slug)
        return {**self.repo.count_subscriptions(slug),
                "items": [shapes.subscriber(d) for d in self.repo.subscription_page(slug, limit, offset)]}

    def _own_address(self, caller: auth.Caller, slug: str) -> tuple[str, str]:
        person = require_person(caller)
        self.workspaces.require(slug)
        found = self.directory.people.persons([person]).get(person)
        if not found or not found.get("email"):
            raise BadRequest("your account has no email address to send the changelog to")
        return person, found["email"].lower()

    # -- the consumer -----------------------------------------------------------------------

    def fan_out(self, slug: str, entry: dict, posts: list[dict], skip: Iterable[str]) -> int:
        """Queue ``entry`` for every confirmed address of ``slug`` but those in ``skip`` (mailed
        of it already, as followers of its posts) and those suppressed, each keyed by the entry
        and the address: a redelivered event queues nothing twice. How many were new."""
        skip = set(skip)
        board: Board | None = None
        queued, after = 0, ""
        while page := self.repo.confirmed_subscribers(slug, after, FAN_OUT_PAGE):
            after = page[-1]["address"]
            targets = [s for s in page if s["address"] not in skip]
            suppressed = self.repo.suppressed(slug, [s["address"] for s in targets]) if targets else set()
            targets = [s for s in targets if s["address"] not in suppressed]
            if targets:
                board = board or self.directory.board(slug)
                locales = self._locales(targets)
                queued += self.queue.enqueue_many(
                    (self.letters.entry(board, entry, posts, s["address"], locales[s["address"]]),
                     f"{ENTRY_KEY}:{entry['id']}:{s['address']}") for s in targets)
        return queued

    def _locales(self, subscribers: list[dict]) -> dict[str, str | None]:
        """Each subscriber's language by address: a person's own subscription follows their
        choice as the people service has it now; an address's is the page's it subscribed from."""
        persons = sorted({s["personId"] for s in subscribers if s.get("personId")})
        found = self.directory.people.persons(persons) if persons and self.directory.people.here() else {}
        return {s["address"]: (found[s["personId"]].get("locale") if s.get("personId") in found else s.get("locale"))
                for s in subscribers}
