"""Who may do what with posts: identities, visibility and the anonymous flags.

- Managers (and the operator) see and do everything in their workspace.
- Everyone else sees approved posts, and a post they wrote in any moderation state.
- Anonymous callers may submit, vote and comment only where the workspace's
  ``anonSubmit``/``anonVote``/``anonComment`` allow it (401 otherwise); SSO users and
  managers always may. An anonymous identity is the gateway's ``anon:<hash>`` of the
  ``X-Feedback-Anonymous-Id`` header (or address and user agent).
"""

from __future__ import annotations

from common import auth
from common.errors import Unauthorized
from posts.contract import APPROVED
from posts.readmodel import Snapshot, Workspaces


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


def can_see(caller: auth.Caller, slug: str, post: dict) -> bool:
    return (
        post.get("moderationState") == APPROVED
        or is_manager(caller, slug)
        or post.get("authorId") == identity(caller)
    )


ACTIONS = {"anonSubmit": "submit posts", "anonVote": "vote", "anonComment": "comment"}


def require_allowed(workspaces: Workspaces, caller: auth.Caller, slug: str, flag: str) -> Snapshot:
    """The workspace snapshot, after checking that ``caller`` may act under ``flag``."""
    if caller.kind != auth.ANONYMOUS:
        return workspaces.get(slug)
    # A flag turned on a moment ago may not have reached the read model: ask the owner once.
    snapshot = workspaces.ensure(slug, lambda s: s.flags.get(flag, False))
    if not snapshot.flags.get(flag, False):
        raise Unauthorized(
            f"this workspace does not let anonymous visitors {ACTIONS[flag]}: "
            "sign in (X-Feedback-User) or use a manager API key"
        )
    return snapshot


def require_manager_first(caller: auth.Caller, slug: str) -> None:
    """Check the role before reading the body: a non-manager learns nothing from validation."""
    auth.require_manager(caller, slug)
