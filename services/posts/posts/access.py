"""Who a caller is to the posts service and what a post shows to whom: the pure rules, and
:class:`Access`, the checks every concept of the service makes with them before anything else
(a caller without the right learns nothing from the body's validation).

Who may do what:
- managers (and the operator) see and do everything in their workspace;
- everyone else sees approved posts, and the posts they wrote in any moderation state;
- anonymous callers may submit, vote and comment only where the workspace's
  ``anonSubmit``/``anonVote``/``anonComment`` allow it (401 otherwise); SSO users may always;
- private comments are written and read by managers only;
- an author (not anonymous) may edit and delete their post or comment for
  ``POSTS_AUTHOR_WINDOW_SECONDS`` after writing it; managers delete any post or comment, edit
  any post, and edit only their own comments (never another's words).

An anonymous identity is the gateway's ``anon:<hash>``; an SSO user's is their user id.
"""

from __future__ import annotations

from common import auth
from common.errors import Forbidden, NotFound, Unauthorized
from common.ids import now, object_id
from posts import shapes, triage
from posts.config import PostsConfig
from posts.contract import APPROVED
from posts.readmodel import Snapshot, Workspaces
from posts.repository import PostRepository
from posts.scores import Scores

ACTIONS = {"anonSubmit": "submit posts", "anonVote": "vote", "anonComment": "comment"}


def identity(caller: auth.Caller) -> str:
    """The stable id a caller votes and writes as."""
    if caller.user_id:
        return caller.user_id
    if caller.kind == auth.MANAGER:
        return f"key:{caller.key_id}"
    if caller.kind == auth.ADMIN:
        return "admin"
    return "anon:unknown"


# The user ids of people: a person signed in with a session (the team's members too), an SSO
# user. Beside them, ``agent:`` (a write key's own identity), ``anon:`` (an anonymous visitor).
PEOPLE = (auth.PERSON_PREFIX, "sso:")


def a_person(caller: auth.Caller) -> bool:
    """Whether the caller is someone's own identity: an SSO user, or a person with a session (a
    session token is presented as a key). Not an anonymous visitor, and not a key that is its
    own identity: a manager key or the operator without a user, a write key's agent (an
    integration, which submits for others: its vote would count nobody)."""
    return caller.kind != auth.ANONYMOUS and (caller.user_id or "").startswith(PEOPLE)


def verified(caller: auth.Caller) -> bool:
    """A post is verified when its author was identified: an SSO user or a manager."""
    return caller.kind in (auth.USER, auth.MANAGER, auth.ADMIN)


def is_manager(caller: auth.Caller, slug: str) -> bool:
    return caller.is_manager_of(slug)


def author(caller: auth.Caller, slug: str) -> dict | None:
    """Who wrote a new post or comment, as it is kept with it (posts.shapes.Reader shows it):
    a person's or an SSO user's name and avatar as their credential gives them now, and
    whether they wrote as the team. None for an API key without a person (its name labels it
    for the team), the operator and an anonymous visitor."""
    if not a_person(caller):
        return None
    return {"name": caller.name, "avatarUrl": caller.avatar_url, "team": is_manager(caller, slug)}


def team_name(caller: auth.Caller, slug: str) -> str | None:
    """The name a comment shows beside its team badge: a signed-in team member's display name.
    None for an API key (its name is a label for the team, not a signature), the operator,
    and end users, whose comments show no name."""
    person = (caller.user_id or "").startswith(auth.PERSON_PREFIX)
    return caller.name if person and is_manager(caller, slug) else None


def can_see(caller: auth.Caller, slug: str, post: dict) -> bool:
    return (
        post.get("moderationState") == APPROVED
        or is_manager(caller, slug)
        or post.get("authorId") == identity(caller)
    )


class Access:
    """The caller's view of posts: whether they may take part in a workspace, which post they
    may see, and posts as they see them."""

    def __init__(self, repo: PostRepository, workspaces: Workspaces, config: PostsConfig, scores: Scores):
        self.repo = repo
        self.workspaces = workspaces
        self.config = config
        self.scores = scores

    def participant(self, caller: auth.Caller, slug: str, flag: str) -> Snapshot:
        """The workspace, after checking that ``caller`` may submit, vote or comment (``flag``)."""
        if caller.kind != auth.ANONYMOUS:
            return self.workspaces.get(slug)
        # The flag as the owner stated it moments ago: one turned on or off just now counts,
        # whether or not its event has reached the read model.
        snapshot = self.workspaces.confirmed(slug, self.config.permission_max_age)
        if not snapshot.flags.get(flag, False):
            raise Unauthorized(
                f"this workspace does not let anonymous visitors {ACTIONS[flag]}: "
                "sign in (X-Feedback-User) or use a manager API key"
            )
        return snapshot

    def visible(self, caller: auth.Caller, slug: str, post_id: str, tx: PostRepository | None = None) -> dict:
        """The post, read in the unit of work ``tx`` if given; 404 when it does not exist or the
        caller may not see it (the two are one answer: a hidden post is not shown to exist)."""
        doc = (tx or self.repo).find_post(slug, object_id(post_id, "post"))
        if doc is None or not can_see(caller, slug, doc):
            raise NotFound(f"post '{post_id}' not found")
        return doc

    def shape(self, caller: auth.Caller, slug: str, ws: Snapshot, docs: list[dict]) -> list[dict]:
        """Posts as ``caller`` sees them: ``voted`` from one query, private comments counted for managers."""
        live = [str(d["_id"]) for d in docs if not d.get("mergedInto")]
        merged = [d["_id"] for d in docs if d.get("mergedInto")]
        voted = self.repo.voted_ids(identity(caller), live, merged) if docs else set()
        manager = is_manager(caller, slug)
        settings = self.triage_of(slug, docs)
        reader = self.reader(caller, slug, ws)
        return [shapes.post(d, ws, str(d["_id"]) in voted, manager, settings, reader) for d in docs]

    def reader(self, caller: auth.Caller, slug: str, ws: Snapshot | None = None) -> shapes.Reader:
        """What tells the caller which posts and comments are theirs to change, and until when,
        and whether they see end users' names (``ws``: the workspace, read if not given)."""
        names = is_manager(caller, slug) or not (ws or self.workspaces.get(slug)).hide_customer_names
        return self._writer(caller, names)

    def _writer(self, caller: auth.Caller, names: bool = True) -> shapes.Reader:
        return shapes.Reader(None if caller.kind == auth.ANONYMOUS else identity(caller), self.config.author_window, names)

    def may_change(self, caller: auth.Caller, slug: str, doc: dict, what: str, team: bool) -> bool:
        """Whether ``caller`` may change ``doc`` (a post or comment they can see): its author
        within the window, or, with ``team``, a manager at any time (True: as the team, False:
        as its author). 401 for an anonymous caller, 403 for anyone else."""
        if team and is_manager(caller, slug):
            return not self._writer(caller).mine(doc)
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized(f"sign in to change a {what}")
        author = self._writer(caller)
        if not author.mine(doc):
            raise Forbidden(f"only its author{' or the team' if team else ''} may change this {what}")
        if now() > author.until(doc):
            minutes = round(self.config.author_window / 60)
            raise Forbidden(f"a {what} can be changed by its author for {minutes} minutes after it was written")
        return False

    def triage_of(self, slug: str, docs: list[dict], tx: PostRepository | None = None) -> triage.Settings:
        """The settings that show these posts: read (current: which fields are internal) when
        one has tags or field values."""
        if any(d.get("tags") or d.get("fields") for d in docs):
            return self.scores.settings(slug, tx)
        return shapes.NO_TRIAGE
