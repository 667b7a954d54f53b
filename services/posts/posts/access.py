"""Who a caller is to the posts service, and what a post shows to whom (pure functions the
service layer's checks are built from; the checks themselves are in ``posts.service``).

An anonymous identity is the gateway's ``anon:<hash>``; an SSO user's is their user id.
"""

from __future__ import annotations

from common import auth
from posts.contract import APPROVED


def identity(caller: auth.Caller) -> str:
    """The stable id a caller votes and writes as."""
    if caller.user_id:
        return caller.user_id
    if caller.kind == auth.MANAGER:
        return f"key:{caller.key_id}"
    if caller.kind == auth.ADMIN:
        return "admin"
    return "anon:unknown"


def verified(caller: auth.Caller) -> bool:
    """A post is verified when its author was identified: an SSO user or a manager."""
    return caller.kind in (auth.USER, auth.MANAGER, auth.ADMIN)


def is_manager(caller: auth.Caller, slug: str) -> bool:
    return caller.is_manager_of(slug)


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
