"""The cluster topology rehearsed on one machine (see rehearsal.py): the init Job, then every
Deployment the chart renders as a process with its container's command and environment, then
a smoke flow through the gateway. Proves the chart's names, commands, env and probes agree
with the code. Select it alone with `pytest -m rehearsal`.

Services whose plugin is not installed here are disabled through values (a values change,
like an operator's), and the steps that need them skip with the reason.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks.webhooks import Webhook

from .chartkit import NAMESPACE, RELEASE, REQUIRED, load_values_yaml, merged, render
from devstack import LocalStack
from common.plugins import load_services
from testkit import Api, create_workspace, wait_for
from testkit.fixtures import logs_folder
from .rehearsal import LocalCluster, container

pytestmark = pytest.mark.rehearsal

FULLNAME = f"{RELEASE}-feedback"

# Values of this rehearsal besides the local MongoDB/Kafka: one gunicorn worker per pod keeps
# the whole platform light on a 2-core machine; everything else is the chart's defaults.
# The webhook receiver is plain http on 127.0.0.1, which the SSRF guard refuses unless told
# (services' own settings travel as `services.<name>.env`, as an operator would set them).
REHEARSAL_VALUES = {
    "defaults": {"api": {"webConcurrency": 1, "webThreads": 8}},
    "gateway": {"webConcurrency": 1},
    "services": {"webhooks": {"env": {"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}}},
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    log_dir = logs_folder(tmp_path_factory, "rehearsal")
    stack = LocalStack(log_dir=log_dir)
    discovered = load_services()
    local = None
    try:
        stack.start_mongo()
        stack.start_kafka()
        absent = {name: {"enabled": False} for name in load_values_yaml()["services"] if name not in discovered}
        values = merged(REQUIRED, REHEARSAL_VALUES, {
            "secrets": {"mongodbUri": stack.mongodb_uri, "kafkaBootstrapServers": stack.kafka_bootstrap},
            "services": absent,
        })
        local = LocalCluster(render(values), stack, NAMESPACE, services=sorted(discovered))
        local.plan()
        local.run_jobs()
        local.start_deployments()
        local.wait_ready()
        yield local
    finally:
        local.stop() if local else stack.stop()


@pytest.fixture(scope="module")
def api(cluster) -> Api:
    return Api(cluster.url(f"{FULLNAME}-gateway"))


@pytest.fixture(scope="module")
def workspace(cluster, api):
    admin_token = cluster.rendered.env_of(cluster.rendered.get("Deployment", f"{FULLNAME}-gateway"))["FEEDBACK_ADMIN_TOKEN"]
    ws = create_workspace(api, admin_token, name="Rehearsal")
    ws.board("features", "Feature requests")
    return ws


@pytest.fixture(scope="module")
def openapi(api) -> dict:
    r = api.get("/openapi.json")
    assert r.status_code == 200, r.text
    return r.json()


def need(cluster, *services: str) -> None:
    missing = [s for s in services if s not in cluster.services]
    if missing:
        pytest.skip(f"service(s) {missing} not discovered here (no plugin installed), so the chart runs without them")


def test_init_job_created_topics_and_indexes(cluster):
    (output,) = cluster.job_output.values()
    assert "kafka topics created" in output
    for service in cluster.services:
        assert f"mongodb indexes ensured for {service}" in output


def test_every_deployment_runs_and_apis_are_ready(cluster):
    assert cluster.dead() == []
    for deployment in cluster.rendered.of_kind("Deployment"):
        c = container(deployment)
        if "readinessProbe" in c:
            name = deployment["metadata"]["name"]
            assert cluster.probe(name, c["livenessProbe"]["httpGet"]["path"]) == 200
            assert cluster.probe(name, c["readinessProbe"]["httpGet"]["path"]) == 200


def test_workspace_and_board_through_the_gateway(api, workspace):
    r = api.get(f"{workspace.path}/branding")
    assert r.status_code == 200, r.text
    assert r.json()["workspace"]["slug"] == workspace.slug
    r = api.get(f"{workspace.path}/agent-context", key=workspace.key)
    assert r.status_code == 200, r.text
    assert [b["slug"] for b in r.json()["boards"]] == ["features"]


def create_post(api, workspace, title: str) -> dict:
    body = {"boardSlug": "features", "title": title, "content": "Rehearsed on one machine."}
    # The posts service learns boards from workspace events: retry until its read model has it.
    def attempt():
        r = api.post(f"{workspace.path}/posts", key=workspace.key, json=body)
        return r if r.status_code == 201 else None
    return wait_for(attempt, timeout=30, what="post creation").json()


def vote_path(openapi: dict) -> str:
    paths = [p for p, ops in openapi["paths"].items() if "post" in ops and re.search(r"/posts/\{\w+\}/votes?$", p)]
    assert paths, "no vote route in the gateway's OpenAPI document"
    return paths[0]


def test_post_and_vote_through_the_gateway(cluster, api, workspace, openapi):
    need(cluster, "posts")
    post = create_post(api, workspace, "Dark mode")
    path = vote_path(openapi).removeprefix("/v1").replace("{slug}", workspace.slug)
    path = re.sub(r"\{\w+\}", post["id"], path)
    r = api.post(path, user=workspace.user_token("voter-1"))
    assert r.status_code in (200, 201), r.text
    got = wait_for(lambda: (lambda p: p if p["voteCount"] == 1 else None)(api.get(f"{workspace.path}/posts/{post['id']}").json()),
                   timeout=10, what="vote counted")
    assert got["voteCount"] == 1


class Receiver(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        self.received.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    handler = type("Handler", (Receiver,), {"received": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hooks/{uuid.uuid4().hex}", handler.received
    server.shutdown()


def test_webhook_delivery_to_a_local_receiver(cluster, api, workspace, receiver):
    """A signed delivery of post.created, or of changelog.published (workspaces) where the
    posts service is not here."""
    need(cluster, "webhooks")
    url, received = receiver
    event = "post.created" if "posts" in cluster.services else "changelog.published"
    r = api.post(f"{workspace.path}/webhooks", key=workspace.key, json={"url": url, "events": [event]})
    assert r.status_code == 201, r.text
    secret = r.json()["secret"]
    if event == "post.created":
        subject = create_post(api, workspace, "Webhooks please")
    else:
        r = api.post(f"{workspace.path}/changelogs", key=workspace.key,
                     json={"title": "Rehearsed", "slug": "rehearsed", "content": "It works.", "publish": True})
        assert r.status_code == 201, r.text
        subject = r.json()
    headers, body = wait_for(lambda: next(((h, b) for h, b in received if subject["id"] in b), None),
                             timeout=60, what=f"webhook delivery of {event}")
    lowered = {k.lower(): v for k, v in headers.items()}
    Webhook(secret).verify(body, {k: lowered[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")})
    assert json.loads(body)["type"] == event


def test_no_component_died_during_the_flow(cluster):
    assert cluster.dead() == [], cluster.logs(cluster.dead())
