"""The admin area: one page per concern under ``/b/{slug}/admin``, for the team.

Each concern is a module here (``boards.py``, ``settings.py``...) holding a :class:`Section`
subclass, its page rules, and the resources its routes name in ``web.plugin.PAGES``; its
template is ``templates/admin/<concern>.html``, extending ``admin/layout.html``. Every action
is a call of the public ``/v1`` API with the visitor's own session, so who may do what is the
API's rule (the page only hides what the visitor could not do). What a manager may not do is
shown to owners only (``owner_only``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One link of the admin navigation."""

    path: str  # under /b/{slug}/admin
    label: str
    owner_only: bool = False


# The navigation, in the order a team meets its concerns.
NAVIGATION = [
    Entry("", "Overview"),
    Entry("/boards", "Boards"),
    Entry("/statuses", "Statuses"),
    Entry("/settings", "Settings"),
    Entry("/authentication", "Sign-in", owner_only=True),
    Entry("/queue", "Moderation queue"),
    Entry("/duplicates", "Duplicates"),
    Entry("/changelog", "Changelog"),
    Entry("/triage", "Triage"),
    Entry("/api-keys", "API keys"),
    Entry("/webhooks", "Webhooks"),
    Entry("/domain", "Custom domain"),
    Entry("/widget", "Widget"),
    Entry("/imports", "Import"),
    Entry("/exports", "Export"),
    Entry("/audit", "Audit log"),
    Entry("/team", "Team"),
]
