"""A client of the public ``/v1`` API, for plugins built on it (the board site, the MCP server).

Such a plugin calls the API over HTTP through the gateway with its user's own identity, so
permissions, visibility and rate limits stay the API's. Pooled, time-limited connections; a
non-2xx answer raises ``ApiError`` with the API's status and ``{"error": ...}`` message."""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

import urllib3

# The client's address as the gateway saw it, signed by the gateway alone: a front service (the
# board site, the MCP server) receives it on every request the gateway forwards to it and sends it
# back, unchanged, on each /v1 call it makes for that request, so per-address budgets and the
# failed-authentication lockout count the real client, never the front service's own address.
CLIENT_HEADER = "X-Feedback-Client"


class ApiError(Exception):
    """The API refused or failed: its status, its ``{"error": ...}`` message and its ``code``."""

    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or ("unavailable" if status == 503 else f"http_{status}")


class ApiClient:
    def __init__(self, base_url: str, timeout: float):
        self.base = base_url.rstrip("/")
        self.http = urllib3.PoolManager(num_pools=4, maxsize=16, timeout=urllib3.Timeout(total=timeout), retries=False)

    def call(self, method: str, path: str, identity: dict, query: dict | None = None, payload: dict | None = None):
        """``path`` is relative to /v1 and ``identity`` the caller's headers (a bearer key, a user
        token...); query parameters that are None or empty are left out. Return the decoded body
        of a 2xx answer, else raise ApiError."""
        params = {k: v for k, v in (query or {}).items() if v not in (None, "")}
        url = self.base + "/v1" + quote(path) + (("?" + urlencode(params, doseq=True)) if params else "")  # a list: repeated
        headers = {"Accept": "application/json", **identity}
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
            code = data.get("code") if isinstance(data, dict) and isinstance(data.get("code"), str) else None
            raise ApiError(answer.status, message or f"the API answered {answer.status}", code)
        return data
