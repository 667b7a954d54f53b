"""Events the people service consumes: what the audit log keeps of other services' changes
(API keys created and revoked, workspace settings changed)."""

from __future__ import annotations

from people.contract import CONSUMES


def handlers(context) -> dict:
    return {topic: context.service.record_event for topic in CONSUMES}
