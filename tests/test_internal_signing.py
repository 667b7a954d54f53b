"""Internal signatures between real processes: a signed request is good once, for the headers it
was signed with, at the kit's middleware (every Falcon service) and at the MCP server's own check;
and the MCP server hands the client token the gateway signed for each request on to its /v1 calls."""

from __future__ import annotations

import http.client
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from common import auth
from devstack import LocalStack, free_port
from common.public_api import CLIENT_HEADER
from testkit import wait_for

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
    assert (status, again) == (401, {"error": THROUGH_THE_GATEWAY, "code": "unauthorized"})
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
    assert workspaces.send("GET", path, {**signed_bare, name: "added"}) == (401, {"error": THROUGH_THE_GATEWAY, "code": "unauthorized"})
    signed = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller(), headers={name: "signed"})
    assert workspaces.send("GET", path, {**signed, name: "changed"}) == (401, {"error": THROUGH_THE_GATEWAY, "code": "unauthorized"})
    signed = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller(), headers={name: "signed"})
    assert workspaces.send("GET", path, {**signed, name: "signed"})[0] == ACCEPTED, "the header it was signed with"


def test_the_kits_client_signs_the_covered_headers_it_sends(stack):
    """What the gateway and the services send through ``InternalClient``: accepted with them."""
    from common.config import load_settings
    from common.internal import InternalClient

    client = InternalClient(load_settings({"INTERNAL_SECRET": stack.internal_secret, "SERVICE_URL_WORKSPACES": stack.service_url("workspaces")}))
    sent = {"Idempotency-Key": "k-1", "Cookie": "fb_anon=x", "Authorization": "Bearer k", CLIENT_HEADER: "token", "Accept": "application/json"}
    for headers in (sent, {}, None):
        assert client.request("workspaces", "GET", PATH, headers=headers).status == ACCEPTED, headers


def test_the_mcp_servers_own_check_refuses_replays_and_changed_headers(stack, mcp):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    signed = auth.signed_headers(stack.internal_secret, "mcp", "POST", "/mcp", "", body, auth.Caller())
    # Signed without a key: the signature passes, then the missing key is refused.
    status, first = mcp.send("POST", "/mcp", {**base, **signed}, body)
    assert status == 401 and first["error"] != THROUGH_THE_GATEWAY, first
    assert mcp.send("POST", "/mcp", {**base, **signed}, body) == (401, {"error": THROUGH_THE_GATEWAY, "code": "unauthorized"})
    for name in COVERED:
        signed = auth.signed_headers(stack.internal_secret, "mcp", "POST", "/mcp", "", body, auth.Caller())
        assert mcp.send("POST", "/mcp", {**base, **signed, name: "Bearer added"}, body) == (401, {"error": THROUGH_THE_GATEWAY, "code": "unauthorized"}), name


# -- the MCP server hands its client's address on ---------------------------------------------------


class ApiStandIn(BaseHTTPRequestHandler):
    """Stands in for the public API behind the gateway: answers what a read key's tools ask and
    records, for each /v1 call, the client token it carried."""

    calls: list[tuple[str, str | None]] = []

    def do_GET(self):
        path = urlsplit(self.path).path
        self.calls.append((path, self.headers.get(CLIENT_HEADER)))
        body = KEY_INFO if path == "/v1/api-key" else {"items": [], "total": 0}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


KEY_INFO = {"workspace": "acme", "role": "read", "id": "k1", "name": "agent"}
AGENT_KEY = "fb_read_stand_in"


class SignedByTheGateway(httpx2.Auth):
    """What the gateway does to each request it forwards to /mcp: pass the bearer key, add the
    client token it made for the request's client, and sign it all for the mcp service."""

    requires_request_body = True

    def __init__(self, secret: str, client_token: str):
        self.secret = secret
        self.client_token = client_token

    def auth_flow(self, request):
        forwarded = {"Authorization": f"Bearer {AGENT_KEY}", CLIENT_HEADER: self.client_token}
        request.headers.update(forwarded)
        request.headers.update(auth.signed_headers(self.secret, "mcp", request.method, request.url.path,
                                                   request.url.query.decode(), request.content, auth.Caller(), forwarded))
        yield request


@pytest.fixture(scope="module")
def api_stand_in():
    """The stand-in API's URL."""
    api = ThreadingHTTPServer(("127.0.0.1", 0), ApiStandIn)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{api.server_port}"
    api.shutdown()


@pytest.fixture(scope="module")
def mcp_before_a_stand_in(tmp_path_factory, api_stand_in):
    """The MCP server as `feedback serve mcp` runs it, its tools calling the stand-in API."""
    local = LocalStack(log_dir=tmp_path_factory.mktemp("mcp-logs"))
    port = free_port()
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "FEEDBACK_DEV": "1", "WEB_CONCURRENCY": "1",
           "INTERNAL_SECRET": local.internal_secret, "MCP_API_URL": api_stand_in}
    if "PYTHONPATH" in os.environ:  # the code under test, where it is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    local.spawn("mcp", [str(Path(sys.executable).parent / "feedback"), "serve", "mcp", "--bind", f"127.0.0.1:{port}"], env)
    try:
        wait_for(lambda: _up(port), timeout=60, what="the MCP server")
        yield local, f"http://127.0.0.1:{port}"
    finally:
        local.stop()


def _up(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def test_the_mcp_server_sends_each_requests_client_token_on_its_api_calls(mcp_before_a_stand_in):
    """Two agents' requests, with one key (so one cached server) and each its own client token:
    each /v1 call a tool makes carries the token of the request it answers, the key check too.
    (The API here is a stand-in that records headers; the gateway's own check of the token is
    the gateway's test.)"""
    local, url = mcp_before_a_stand_in

    async def agent(client_token):
        async with httpx2.AsyncClient(auth=SignedByTheGateway(local.internal_secret, client_token), timeout=30) as http_client:
            async with Client(streamable_http_client(url + "/mcp", http_client=http_client)) as client:
                result = await client.call_tool("list_posts", {})
                assert not result.is_error, result.content

    ApiStandIn.calls.clear()
    anyio.run(agent, "client-token-a")
    first = list(ApiStandIn.calls)
    ApiStandIn.calls.clear()
    anyio.run(agent, "client-token-b")
    second = list(ApiStandIn.calls)
    assert ("/v1/api-key", "client-token-a") in first, first
    assert ("/v1/workspaces/acme/posts", "client-token-a") in first, first
    assert ("/v1/workspaces/acme/posts", "client-token-b") in second, second
    assert {token for _, token in first} == {"client-token-a"} and {token for _, token in second} == {"client-token-b"}


def test_the_mcp_servers_key_cache_drops_the_least_recent_key_when_full(api_stand_in, monkeypatch):
    """Past its bound, one key's server makes room; the others stay (and no /v1/api-key call)."""
    from common.config import load_settings
    from feedback_mcp import resources as mcp_resources
    from feedback_mcp.plugin import create_context

    monkeypatch.setattr(mcp_resources, "SERVERS_MAX", 2)
    key_servers = mcp_resources.KeyServers(create_context(load_settings({"PUBLIC_BASE_URL": api_stand_in})))
    ApiStandIn.calls.clear()
    servers = {key: key_servers.get(key) for key in ("key-1", "key-2", "key-3")}
    assert len(ApiStandIn.calls) == 3
    assert key_servers.get("key-3") is servers["key-3"] and key_servers.get("key-2") is servers["key-2"]
    assert len(ApiStandIn.calls) == 3, "kept: no second key check"
    assert key_servers.get("key-1") is not servers["key-1"] and len(ApiStandIn.calls) == 4, "the one dropped"
