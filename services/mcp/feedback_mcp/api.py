"""The public API as the tools call it: over HTTP through the gateway, with the caller's key.

Every tool is one or a few of these calls, so the gateway and the owning services decide
permissions, visibility and rate limits exactly as for any other client of ``/v1``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import urllib3


class ApiError(Exception):
    """The API refused or failed: its status and its ``{"error": ...}`` message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class ApiClient:
    def __init__(self, base_url: str, timeout: float):
        self.base = base_url.rstrip("/")
        self.http = urllib3.PoolManager(num_pools=4, maxsize=16, timeout=urllib3.Timeout(total=timeout), retries=False)

    def call(self, method: str, path: str, key: str, query: dict | None = None, payload: dict | None = None):
        """``path`` is relative to /v1; return the decoded body of a 2xx answer, else raise ApiError."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.base + "/v1" + quote(path) + (("?" + urlencode(params)) if params else "")
        headers = {"Accept": "application/json", "Authorization": f"Bearer {key}"}
        body = None
        if payload is not None:
            body = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        try:
            answer = self.http.request(method, url, body=body, headers=headers)
        except urllib3.exceptions.HTTPError as ex:
            raise ApiError(503, f"the API is unavailable ({ex.__class__.__name__})") from None
        try:
            data = json.loads(answer.data or b"null")
        except ValueError:
            data = None
        if answer.status >= 300:
            message = data.get("error") if isinstance(data, dict) else None
            raise ApiError(answer.status, message or f"the API answered {answer.status}")
        return data

    def key_info(self, key: str) -> "KeyInfo":
        """What ``key`` is (``GET /v1/api-key``): its workspace and role; ApiError when it is none."""
        body = self.call("GET", "/api-key", key)
        return KeyInfo(workspace=body["workspace"], role=body["role"], key_id=body["id"], name=body["name"])


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
        return self.client.call("GET", self._path(path), self.key, query=query)

    def post(self, path: str, payload: dict | None = None):
        return self.client.call("POST", self._path(path), self.key, payload=payload)

    def patch(self, path: str, payload: dict):
        return self.client.call("PATCH", self._path(path), self.key, payload=payload)

    def delete(self, path: str):
        return self.client.call("DELETE", self._path(path), self.key)

    def _path(self, path: str) -> str:
        return f"/workspaces/{self.slug}{path}"
