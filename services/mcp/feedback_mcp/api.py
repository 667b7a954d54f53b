"""The public API as the tools call it: over HTTP through the gateway, with the caller's key.

Every tool is one or a few of these calls, so the gateway and the owning services decide
permissions, visibility and rate limits exactly as for any other client of ``/v1``. Over HTTP,
each call also carries the client token of the request it answers (``CLIENT_TOKEN``), so the
gateway counts the agent's own address, not the MCP server's."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from common.public_api import CLIENT_HEADER, ApiError
from common.public_api import ApiClient as PublicApiClient

__all__ = ["CLIENT_TOKEN", "ApiClient", "ApiError", "KeyInfo", "WorkspaceApi"]

# The gateway-signed client token (``X-Feedback-Client``) of the request being answered. A
# context variable, not an attribute: one key's server is cached across requests of different
# clients, and each request (its task, and threads started with ``anyio.to_thread``, which copy
# the context) sees only its own. Unset over stdio, where no gateway stands in between.
CLIENT_TOKEN: contextvars.ContextVar[str | None] = contextvars.ContextVar("feedback_client_token", default=None)


class ApiClient(PublicApiClient):
    def call(self, method: str, path: str, identity: dict, query: dict | None = None, payload: dict | None = None):
        token = CLIENT_TOKEN.get()
        if token:
            identity = {**identity, CLIENT_HEADER: token}
        return super().call(method, path, identity, query=query, payload=payload)

    def key_info(self, key: str) -> "KeyInfo":
        """What ``key`` is (``GET /v1/api-key``): its workspace and role; ApiError when it is none."""
        body = self.call("GET", "/api-key", bearer(key))
        return KeyInfo(workspace=body["workspace"], role=body["role"], key_id=body["id"], name=body["name"])


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


@dataclass(frozen=True)
class KeyInfo:
    workspace: str
    role: str  # manager, write or read
    key_id: str
    name: str


class WorkspaceApi:
    """The API of one workspace, as one key: paths are relative to ``/v1/workspaces/{slug}``."""

    def __init__(self, client: ApiClient, key: str, info: KeyInfo):
        self.client = client
        self.key = key
        self.info = info
        self.slug = info.workspace

    def get(self, path: str, **query):
        return self.client.call("GET", self._path(path), bearer(self.key), query=query)

    def post(self, path: str, payload: dict | None = None):
        return self.client.call("POST", self._path(path), bearer(self.key), payload=payload)

    def patch(self, path: str, payload: dict):
        return self.client.call("PATCH", self._path(path), bearer(self.key), payload=payload)

    def delete(self, path: str):
        return self.client.call("DELETE", self._path(path), bearer(self.key))

    def _path(self, path: str) -> str:
        return f"/workspaces/{self.slug}{path}"
