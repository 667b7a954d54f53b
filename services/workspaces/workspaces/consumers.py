"""Events the workspaces service consumes: custom-domain state for branding, and members who
leave a team (their API keys go with them)."""

from __future__ import annotations

from common.consumer import only
from workspaces.contract import DOMAINS_TOPIC, MEMBER_REMOVED, PEOPLE_TOPIC


def handlers(context) -> dict:
    def on_domain_event(event: dict) -> None:
        # The domains service says where each workspace's domain stands; branding shows
        # the domain only while it is verified.
        data = event.get("data") or {}
        verified = data.get("status") == "verified" and event["type"] != "domain.removed"
        context.service.set_custom_domain(event["workspace"], data.get("domain") if verified else None)

    def on_people_event(event: dict) -> None:
        # A removed member's keys stop at once in the people service's identity check; here
        # they are revoked for good, so they show as revoked in the key list too.
        if event.get("type") != MEMBER_REMOVED:
            return
        data = event.get("data") or {}
        person_id = (data.get("person") or {}).get("id")
        if person_id:
            context.service.revoke_keys_made_by(event["workspace"], f"person:{person_id}", data.get("actor"))

    return {DOMAINS_TOPIC: on_domain_event, PEOPLE_TOPIC: only((MEMBER_REMOVED,), on_people_event)}
