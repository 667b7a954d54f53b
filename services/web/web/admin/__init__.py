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

from common.i18n import N_


@dataclass(frozen=True)
class Entry:
    """One link of the admin navigation."""

    path: str  # under /b/{slug}/admin
    label: str  # the English words (N_), translated where the navigation is shown
    owner_only: bool = False


# The navigation, in the order a team meets its concerns.
NAVIGATION = [
    Entry("", N_("Overview")),
    Entry("/boards", N_("Boards")),
    Entry("/statuses", N_("Statuses")),
    Entry("/settings", N_("Settings")),
    Entry("/authentication", N_("Sign-in"), owner_only=True),
    Entry("/queue", N_("Moderation queue")),
    Entry("/duplicates", N_("Duplicates")),
    Entry("/changelog", N_("Changelog")),
    Entry("/triage", N_("Triage")),
    Entry("/api-keys", N_("API keys")),
    Entry("/webhooks", N_("Webhooks")),
    Entry("/domain", N_("Custom domain")),
    Entry("/widget", N_("Widget")),
    Entry("/imports", N_("Import")),
    Entry("/exports", N_("Export")),
    Entry("/audit", N_("Audit log")),
    Entry("/team", N_("Team")),
]
