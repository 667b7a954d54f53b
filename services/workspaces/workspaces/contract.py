"""What the workspaces service owns, publishes and consumes."""

TOPIC = "feedback.workspaces"
CONSUMES = ("feedback.domains",)

# Events on feedback.workspaces (data shapes in docs/services/workspaces.md):
WORKSPACE_CREATED = "workspace.created"  # data: workspace snapshot
WORKSPACE_UPDATED = "workspace.updated"  # data: workspace snapshot (boards, statuses, flags)
CHANGELOG_PUBLISHED = "changelog.published"  # data: the changelog entry

COLLECTIONS = ("workspaces", "api_keys", "changelogs", "outbox", "processed_events", "locks")

# How many published changelog entries the agent context lists, newest first.
AGENT_CONTEXT_CHANGELOGS = 5

THEMES = ("light", "dark", "system")

DEFAULT_STATUSES = (
    # slug, name, colour, shown on the roadmap
    ("open", "Open", "#64748b", True),
    ("under-review", "Under review", "#f59e0b", True),
    ("planned", "Planned", "#8b5cf6", True),
    ("in-progress", "In progress", "#3b82f6", True),
    ("complete", "Complete", "#22c55e", True),
    ("closed", "Closed", "#ef4444", False),
)
DEFAULT_STATUS = "open"
