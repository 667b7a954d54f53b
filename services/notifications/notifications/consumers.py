"""Events the notifications service consumes: posts, votes, comments, merges (feedback.posts),
published changelog entries (feedback.workspaces) and members removed from a team
(feedback.people); ``notifications.notifier`` decides."""

from __future__ import annotations

from common.consumer import only
from notifications.contract import CONSUMES


def handlers(context) -> dict:
    return {topic: only(context.notifier.handlers(), context.notifier.handle) for topic in CONSUMES}
