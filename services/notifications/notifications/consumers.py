"""Events the notifications service consumes: posts, votes, comments, merges (feedback.posts)
and published changelog entries (feedback.workspaces); ``notifications.notifier`` decides."""

from __future__ import annotations

from notifications.contract import CONSUMES


def handlers(context) -> dict:
    return {topic: context.notifier.handle for topic in CONSUMES}
