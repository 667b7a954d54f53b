"""Events the posts service consumes: workspace snapshots for its read model."""

from __future__ import annotations

from posts.contract import CONSUMES, WORKSPACE_SNAPSHOTS


def handlers(context) -> dict:
    def on_workspace_event(event: dict) -> None:
        if event.get("type") in WORKSPACE_SNAPSHOTS:
            context.workspaces.apply(event["data"])
        # changelog.published and any future types are not ours to keep.

    return {topic: on_workspace_event for topic in CONSUMES}
