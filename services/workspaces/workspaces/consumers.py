"""Events the workspaces service consumes: custom-domain state for branding."""

from __future__ import annotations

from workspaces.contract import CONSUMES


def handlers(context) -> dict:
    def on_domain_event(event: dict) -> None:
        # The domains service says where each workspace's domain stands; branding shows
        # the domain only while it is verified.
        data = event.get("data") or {}
        verified = data.get("status") == "verified" and event["type"] != "domain.removed"
        context.service.set_custom_domain(event["workspace"], data.get("domain") if verified else None)

    return {topic: on_domain_event for topic in CONSUMES}
