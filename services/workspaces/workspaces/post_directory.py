"""Which post ids exist in a workspace, for changelog ``postIds``.

The posts service owns posts, and a changelog written right after a post must be able
to reference it, so this asks the owner over signed internal HTTP (read-your-writes)
instead of keeping a read model that could lag.
"""

from __future__ import annotations

from common.errors import Unavailable
from common.internal import InternalClient

LOOKUP_PATH = "/internal/posts/lookup"


class PostDirectory:
    def __init__(self, client: InternalClient):
        self.client = client

    def unknown(self, slug: str, ids: list[str]) -> list[str]:
        """The ids among ``ids`` that name no post of workspace ``slug``."""
        if not self.client.settings.service_url("posts"):
            return []  # no posts service in this deployment: nothing to check against
        status, body = self.client.json("posts", "POST", LOOKUP_PATH, {"workspace": slug, "ids": ids})
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot check postIds now: the posts service answered {status}")
        found = set(body.get("found", []))
        return [i for i in ids if i not in found]
