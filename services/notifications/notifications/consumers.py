"""Events the notifications service consumes: posts, votes, comments, merges (feedback.posts),
published changelog entries (feedback.workspaces) and members removed from a team
(feedback.people); ``notifications.notifier`` decides. A person erased (feedback.people) is
``notifications.erasure``'s."""

from __future__ import annotations

from common.consumer import only
from notifications.contract import CONSUMES, PEOPLE_TOPIC, PERSON_ERASED


def handlers(context) -> dict:
    notified = context.notifier.handlers()

    def handle(event: dict) -> None:
        if event["type"] == PERSON_ERASED:  # a person erased: notifications.erasure
            context.erasure.erase(event["data"])
        else:
            context.notifier.handle(event)

    return {topic: only((*notified, PERSON_ERASED) if topic == PEOPLE_TOPIC else notified, handle) for topic in CONSUMES}
