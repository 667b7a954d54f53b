"""Events the posts service consumes: workspace snapshots for its read model, companies' spend
and members for the revenue behind each post (posts.revenue), and its own: a new post is
compared with the others (suggested duplicates), a save of the triage settings rescores the
workspace (posts.scores); and a person erased (posts.erasure)."""

from __future__ import annotations

from common.consumer import only
from common.money import to_cents
from posts.contract import (
    COMPANIES_TOPIC, PEOPLE_TOPIC, PERSON_ERASED, POST_CREATED, TOPIC, TRIAGE_UPDATED, WORKSPACE_SNAPSHOTS, WORKSPACES_TOPIC,
)


def handlers(context) -> dict:
    def on_workspace_event(event: dict) -> None:
        if event.get("type") in WORKSPACE_SNAPSHOTS:
            context.workspaces.apply(event["data"])
        # changelog.published and any future types are not ours to keep.

    revenue = context.revenue

    def on_companies_event(event: dict) -> None:
        slug, data = event["workspace"], event["data"]
        if event["type"] == "company.updated":
            company = data["company"]
            revenue.company_updated(slug, company["id"], to_cents(company["monthlySpend"]), company["name"])
        elif event["type"] == "company.deleted":
            revenue.company_deleted(slug, data["company"]["id"])
        elif event["type"] == "membership.changed":
            revenue.membership_changed(slug, data["userId"], data["companies"])

    def on_posts_event(event: dict) -> None:
        slug = event["workspace"]
        if event["type"] == POST_CREATED:
            context.merges.suggest_duplicates(slug, event["data"]["post"]["id"])
        elif event["type"] == TRIAGE_UPDATED:
            context.scores.rescore(slug)

    def on_person_erased(event: dict) -> None:
        context.erasure.erase(event["data"]["userId"], event["data"]["workspace"])

    return {
        PEOPLE_TOPIC: only((PERSON_ERASED,), on_person_erased),
        WORKSPACES_TOPIC: only(WORKSPACE_SNAPSHOTS, on_workspace_event),
        COMPANIES_TOPIC: only(("company.updated", "company.deleted", "membership.changed"), on_companies_event),
        TOPIC: only((POST_CREATED, TRIAGE_UPDATED), on_posts_event),  # votes and comments are not ours to redo
    }
