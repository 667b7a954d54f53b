"""The notifications service's API rules: following posts, preferences, unsubscribing, and what
the team may see of delivery.

Each public method checks who may (raising 401/403) before it validates the body. Following and
preferences belong to a signed-in person (``person:<id>``): mail needs the address a person has.
Whether a caller may see a post is the posts service's decision, asked, not copied.
"""

from __future__ import annotations

from common import auth
from common.ids import iso, now
from common.errors import BadRequest, Forbidden, NotFound, Unauthorized
from common.mail import MailQueue, parse_address
from common.validation import check
from common.directory import Workspaces
from notifications import schemas, shapes
from notifications.directory import Directory
from notifications.repository import NotificationsRepository
from notifications.tokens import UnsubscribeTokens


def require_person(caller: auth.Caller) -> str:
    """The caller's person id; 401 for nobody, 403 for a caller without an account."""
    if caller.kind == auth.ANONYMOUS:
        raise Unauthorized("sign in to follow posts and choose your notifications")
    if not (caller.user_id or "").startswith(auth.PERSON_PREFIX):
        raise Forbidden("notifications belong to a signed-in person with an email address (not an API key or an SSO user without one)")
    return caller.user_id


class NotificationsService:
    def __init__(self, repo: NotificationsRepository, directory: Directory, workspaces: Workspaces,
                 tokens: UnsubscribeTokens, queue: MailQueue):
        self.repo, self.directory, self.workspaces, self.tokens, self.queue = repo, directory, workspaces, tokens, queue

    # -- following ------------------------------------------------------------------------

    def follow_state(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        person = require_person(caller)
        post = self.directory.posts.visible(caller, slug, post_id)
        return shapes.follow(post["id"], self.repo.following(post["id"], person))

    def set_follow(self, caller: auth.Caller, slug: str, post_id: str, body) -> dict:
        person = require_person(caller)
        following = check(body, schemas.FOLLOW)["following"]
        post = self.directory.posts.visible(caller, slug, post_id)
        self.repo.set_following(slug, post["id"], person, following)
        return shapes.follow(post["id"], following)

    # -- preferences ----------------------------------------------------------------------

    def preferences(self, caller: auth.Caller, slug: str) -> dict:
        person = require_person(caller)
        self.workspaces.require(slug)
        return shapes.preferences(slug, self.repo.choices(slug, [person])[person], caller.is_manager_of(slug))

    def update_preferences(self, caller: auth.Caller, slug: str, body) -> dict:
        person = require_person(caller)
        changes = check(body, schemas.PREFERENCES)
        self.workspaces.require(slug)
        choices = self.repo.change_choices(slug, person, changes) if changes else self.repo.choices(slug, [person])[person]
        return shapes.preferences(slug, choices, caller.is_manager_of(slug))

    def changelog_seen(self, caller: auth.Caller, slug: str) -> dict:
        """When the person last looked at the changelog (None: never), kept for them across
        devices: the widget's unread badge counts the entries published since."""
        person = require_person(caller)
        self.workspaces.require(slug)
        return {"seenAt": iso(self.repo.changelog_seen(slug, person))}

    def see_changelog(self, caller: auth.Caller, slug: str) -> dict:
        person = require_person(caller)
        self.workspaces.require(slug)
        return {"seenAt": iso(self.repo.see_changelog(slug, person, now()))}

    def unsubscribe(self, slug: str, body) -> dict:
        """A mail's one-click unsubscribe: no sign-in, the signed token says who."""
        token = check(body, schemas.UNSUBSCRIBE)["token"]
        who = self.tokens.read(token)
        if who is None or who[0] != slug:
            raise BadRequest("this unsubscribe link is not valid for this workspace")
        self.repo.change_choices(slug, who[1], {"unsubscribed": True})
        return {"workspace": slug, "unsubscribed": True}

    # -- delivery, for the team -----------------------------------------------------------

    def suppressions(self, caller: auth.Caller, slug: str, limit: int, offset: int) -> dict:
        self.workspaces.require_manager(caller, slug)
        return {"items": [shapes.suppression(d) for d in self.repo.suppression_page(slug, limit, offset)]}

    def lift_suppression(self, caller: auth.Caller, slug: str, address: str) -> None:
        self.workspaces.require_manager(caller, slug)
        try:
            address = parse_address(address).addr_spec.lower()
        except ValueError:
            raise NotFound(f"address '{address}' is not suppressed") from None
        if not self.repo.lift_suppression(slug, address):
            raise NotFound(f"address '{address}' is not suppressed")

    def delivery(self, caller: auth.Caller, slug: str) -> dict:
        """How this workspace's mail fares: queued, sent and failed messages (finished ones are
        kept a week), those that needed more than one try, and suppressed addresses."""
        self.workspaces.require_manager(caller, slug)
        return {**self.repo.count_mail(self.queue, slug), "suppressed": self.repo.count_suppressed(slug)}
