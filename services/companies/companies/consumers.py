"""Events the companies service consumes: the companies an SSO token says its user belongs to
(feedback.people, ``user.companies_claimed``), and a person erased (``person.erased``)."""

from __future__ import annotations

from common.consumer import only
from companies.contract import COMPANIES_CLAIMED, CONSUMES, PERSON_ERASED


def handlers(context) -> dict:
    def on_people_event(event: dict) -> None:
        if event.get("type") == COMPANIES_CLAIMED:
            context.service.claimed(event["workspace"], event["data"]["userId"], event["data"]["companies"])
        elif event.get("type") == PERSON_ERASED:
            context.service.erase(event["data"]["userId"], event["data"]["workspace"])
        # member.* events are the team's, not ours.

    return {topic: only((COMPANIES_CLAIMED, PERSON_ERASED), on_people_event) for topic in CONSUMES}
