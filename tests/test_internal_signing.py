"""Internal signatures between real processes: a signed request is good once, for the headers it
was signed with, at the kit's middleware (every Falcon service) and at the MCP server's own check."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from common import auth
from common.public_api import CLIENT_HEADER

COVERED = ("Idempotency-Key", "Cookie", "Authorization", CLIENT_HEADER)
THROUGH_THE_GATEWAY = "requests must come through the gateway"


class Connection:
    """One kept-alive connection: every request on it reaches the same server process (gunicorn
    keeps a connection with the worker that accepted it), where the nonce memory lives."""

    def __init__(self, base_url: str):
        url = urlsplit(base_url)
        self.http = http.client.HTTPConnection(url.hostname, url.port, timeout=10)

    def send(self, method: str, path: str, headers: dict, body: bytes | None = None) -> tuple[int, dict]:
        self.http.request(method, path, body=body, headers=headers)
        answer = self.http.getresponse()
        return answer.status, json.loads(answer.read() or b"null")

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def workspaces(stack):
    connection = Connection(stack.service_url("workspaces"))
    yield connection
    connection.close()


@pytest.fixture
def mcp(stack):
    connection = Connection(stack.service_url("mcp"))
    yield connection
    connection.close()


# No such workspace: a 404 answer is the service's own, given once the signature was accepted.
PATH = "/v1/workspaces/no-such-workspace/branding"
ACCEPTED = 404


def test_a_replayed_signed_request_is_refused(stack, workspaces):
    path = PATH
    headers = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller())
    status, first = workspaces.send("GET", path, headers)
    assert status == ACCEPTED, first
    status, again = workspaces.send("GET", path, headers)
    assert (status, again) == (401, {"error": THROUGH_THE_GATEWAY})
    fresh = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller())
    assert workspaces.send("GET", path, fresh)[0] == ACCEPTED  # a new signature is a new request


def test_a_request_with_none_of_the_covered_headers_passes(stack, workspaces):
    path = PATH
    headers = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller(), headers={})
    assert workspaces.send("GET", path, headers)[0] == ACCEPTED


@pytest.mark.parametrize("name", COVERED)
def test_adding_or_changing_a_covered_header_is_refused(stack, workspaces, name):
    path = PATH
    signed_bare = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller())
    assert workspaces.send("GET", path, {**signed_bare, name: "added"}) == (401, {"error": THROUGH_THE_GATEWAY})
    signed = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller(), headers={name: "signed"})
    assert workspaces.send("GET", path, {**signed, name: "changed"}) == (401, {"error": THROUGH_THE_GATEWAY})
    signed = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller(), headers={name: "signed"})
    assert workspaces.send("GET", path, {**signed, name: "signed"})[0] == ACCEPTED, "the header it was signed with"


def test_the_mcp_servers_own_check_refuses_replays_and_changed_headers(stack, mcp):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    signed = auth.signed_headers(stack.internal_secret, "mcp", "POST", "/mcp", "", body, auth.Caller())
    # Signed without a key: the signature passes, then the missing key is refused.
    status, first = mcp.send("POST", "/mcp", {**base, **signed}, body)
    assert status == 401 and first["error"] != THROUGH_THE_GATEWAY, first
    assert mcp.send("POST", "/mcp", {**base, **signed}, body) == (401, {"error": THROUGH_THE_GATEWAY})
    for name in COVERED:
        signed = auth.signed_headers(stack.internal_secret, "mcp", "POST", "/mcp", "", body, auth.Caller())
        assert mcp.send("POST", "/mcp", {**base, **signed, name: "Bearer added"}, body) == (401, {"error": THROUGH_THE_GATEWAY}), name
