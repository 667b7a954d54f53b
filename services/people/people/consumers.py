"""Events the people service consumes: what the audit log keeps of other services' changes
(API keys created and revoked, workspace settings changed)."""

from __future__ import annotations

from common.consumer import only
from people.contract import AUDITED_EVENTS, CONSUMES


def handlers(context) -> dict:
    return {topic: only(AUDITED_EVENTS, context.service.record_event) for topic in CONSUMES}
