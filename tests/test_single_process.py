"""``make run``'s lean layout (gateway.single_process): the gateway, every WSGI service and their
workers in one process, the MCP server in another. The suite runs the chart's layout (a process
per API and per worker); this runs the other one end to end: a post written through the gateway
is read, found by a search (the sentence model loaded once, in that process), shown on the board
page, and its event goes through the outbox relay, Kafka, the webhooks consumer and sender, all
threads of the one process, to a receiver."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from devstack import LocalStack
from testkit.api import Api, create_workspace, wait_for
from testkit.fixtures import RATE_LIMIT_SETTINGS


class Receiver(BaseHTTPRequestHandler):
    bodies: list[dict] = []

    def do_POST(self):
        Receiver.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    env = {name: "0/60" for name in RATE_LIMIT_SETTINGS}
    env.update({"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"})
    platform = LocalStack(layout="single", log_dir=tmp_path_factory.mktemp("single-logs"), extra_env=env)
    try:
        platform.start()
        yield platform
    finally:
        platform.stop()


def test_the_platform_runs_in_one_process_beside_the_mcp_server(single):
    assert set(single.processes) == {"mongo", "kafka", "platform", "mcp-api"}
    for name in single.service_ports:  # each service still answers on its own port
        assert requests.get(single.service_url(name) + "/healthz", timeout=5).status_code == 200


def test_a_post_travels_every_path_within_the_one_process(single, receiver):
    api = Api(single.url)
    ws = create_workspace(api, single.admin_token)
    ws.board()
    r = api.post(f"{ws.path}/webhooks", key=ws.key, json={"url": receiver, "events": ["post.created"]})
    assert r.status_code == 201, r.text
    r = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "Export to CSV", "content": "please"})
    assert r.status_code == 201, r.text
    post = r.json()

    assert api.get(f"{ws.path}/posts/{post['id']}", key=ws.key).json()["title"] == "Export to CSV"
    found = wait_for(lambda: [p for p in api.get(f"{ws.path}/posts/search", key=ws.key, params={"q": "csv export"}).json()["items"]
                              if p["id"] == post["id"]], what="the post found by a search")
    assert found
    page = requests.get(f"{single.url}/b/{ws.slug}", timeout=10)
    assert page.status_code == 200 and "Export to CSV" in page.text
    delivered = wait_for(lambda: [b for b in Receiver.bodies if post["id"] in json.dumps(b.get("data"))], timeout=30,
                         what="the post.created webhook")
    assert delivered[0]["type"] == "post.created"
