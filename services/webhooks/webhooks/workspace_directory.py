"""Does a workspace exist? Asked of the workspaces service (its owner) over internal HTTP.

Only the operator token can reach a workspace that may not exist (a manager key proves its
workspace exists), so only those requests pay for the call.
"""

from __future__ import annotations

from urllib.parse import quote

from common.errors import BadGateway, NotFound
from common.internal import InternalClient


class WorkspaceDirectory:
    def __init__(self, client: InternalClient):
        self.client = client

    def require(self, slug: str) -> None:
        status, _ = self.client.json("workspaces", "GET", f"/internal/workspaces/{quote(slug, safe='')}/snapshot")
        if status == 404:
            raise NotFound(f"workspace '{slug}' not found")
        if status != 200:
            raise BadGateway(f"the workspaces service answered {status}")
