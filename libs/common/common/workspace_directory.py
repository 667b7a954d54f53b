"""Whether a workspace exists, for services that do not keep a read model of workspaces.

A manager's API key belongs to its workspace (the gateway checked that), so only the
operator's requests need asking. The workspaces service owns workspaces; a call made right
after a workspace was created must work, so this asks the owner over signed internal HTTP
(read-your-writes) and remembers the answers that cannot change (workspaces are never deleted).
"""

from __future__ import annotations

from common import auth
from common.errors import NotFound, Unavailable
from common.internal import InternalClient

OWNER = "workspaces"
SNAPSHOT_PATH = "/internal/workspaces/{slug}/snapshot"


class WorkspaceDirectory:
    def __init__(self, client: InternalClient):
        self.client = client
        self._known: set[str] = set()

    def require_manager(self, caller: auth.Caller, slug: str) -> None:
        """401/403 unless a manager of ``slug`` (or the operator); 404 for an unknown workspace."""
        auth.require_manager(caller, slug)
        if caller.kind == auth.ADMIN:
            self.require(slug)

    def require(self, slug: str) -> None:
        """Raise NotFound for an unknown workspace."""
        if slug not in self._known:
            self.snapshot(slug)

    def snapshot(self, slug: str) -> dict:
        """What the workspaces service shares of ``slug`` (name, boards, statuses: no secrets);
        NotFound for an unknown workspace."""
        status, body = self.client.json(OWNER, "GET", SNAPSHOT_PATH.format(slug=slug))
        if status == 404:
            raise NotFound(f"workspace '{slug}' not found")
        if status != 200:
            raise Unavailable(f"cannot check workspace '{slug}' now: the workspaces service answered {status}")
        self._known.add(slug)
        return body

    def name(self, slug: str) -> str:
        return self.snapshot(slug)["name"]
