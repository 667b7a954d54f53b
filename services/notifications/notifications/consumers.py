"""Events the notifications service consumes: posts, votes, comments, merges (feedback.posts),
published changelog entries (feedback.workspaces) and members removed from a team
(feedback.people); ``notifications.notifier`` decides."""

from __future__ import annotations

from notifications.contract import CONSUMES


def handlers(context) -> dict:
    return {topic: context.notifier.handle for topic in CONSUMES}
