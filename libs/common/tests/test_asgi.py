"""The kit's ASGI app (``common.asgi``), driven as an ASGI server drives it (Falcon's test client
speaks ASGI to it, lifespan included): the gateway's signature checked once per request, the
caller and body handed on, one ``{"error"}`` shape for every refusal, request ids, metrics,
health; a page handing its request to another ASGI app (a Starlette app, as the MCP SDK's is)
whose lifespan is held around it."""

from __future__ import annotations

import contextlib

import falcon.testing
import pytest
from prometheus_client import REGISTRY
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route as StarletteRoute

from common import asgi, auth
from common.config import load_settings
from common.errors import Conflict
from common.plugins import Route, ServiceSpec
from common.public_api import ApiError

SECRET = "test-internal-secret"
MAX_BODY = 64


class Context:
    """A front service's context, as ``create_service_app`` gets it from the spec."""

    def __init__(self, settings, checks=None):
        self.settings = settings
        self.started = 0
        self.checks = checks or {}

    def start_api(self):
        self.started += 1

    def readiness(self):
        return self.checks


class Echo:
    """A page: what reached it after the kit's checks."""

    def __init__(self, context):
        self.context = context

    async def on_post(self, req, resp):
        resp.media = {"caller": req.context.caller.kind, "body": req.context.body.decode(), "query": req.query_string}


class Refuses:
    """A page whose every answer is a refusal, by what ``?with=`` names."""

    def __init__(self, context):
        pass

    async def on_get(self, req, resp):
        kind = req.get_param("with")
        if kind == "domain":
            raise Conflict("that name is taken")
        if kind == "api":
            raise ApiError(429, "too many requests from this address")
        if kind == "page-bug":  # a page that failed after choosing its type (a template's error)
            resp.content_type = falcon.MEDIA_HTML
        raise RuntimeError("a bug")


# What the sub-app's lifespan did, in order (a page's sub-app is built once per process).
LIFESPAN_STEPS: list[str] = []


def a_sub_app(steps: list[str]) -> Starlette:
    """A Starlette app (what the MCP SDK hands out) whose answers need its lifespan running."""
    running = {"now": False}

    @contextlib.asynccontextmanager
    async def lifespan(app):
        steps.append("startup")
        running["now"] = True
        yield
        running["now"] = False
        steps.append("shutdown")

    async def answer(request: Request):
        assert running["now"], "served outside its lifespan"
        body = await request.body()
        return JSONResponse({"path": request.url.path, "body": body.decode(), "tag": request.headers.get("x-tag")},
                            status_code=202, headers={"X-Sub": "yes", "Set-Cookie": "a=1"})

    return Starlette(routes=[StarletteRoute("/hand-on", answer, methods=["POST"])], lifespan=lifespan)


class HandsOn:
    """A page that hands its request to a sub-app, within the sub-app's lifespan."""

    def __init__(self, context):
        self.sub = a_sub_app(LIFESPAN_STEPS)

    async def on_post(self, req, resp):
        async with self.sub.router.lifespan_context(self.sub):
            await asgi.forward(req, resp, self.sub, req.context.body)


class Silent:
    def __init__(self, context):
        pass

    async def on_post(self, req, resp):
        async def nothing(scope, receive, send):
            pass

        await asgi.forward(req, resp, nothing, req.context.body)


PAGES = [
    Route("/echo", f"{__name__}:Echo", ("POST",)),
    Route("/refuse", f"{__name__}:Refuses", ("GET",)),
    Route("/hand-on", f"{__name__}:HandsOn", ("POST",)),
    Route("/silent", f"{__name__}:Silent", ("POST",)),
]
SPEC = ServiceSpec(name="front", context=f"{__name__}:Context", pages=PAGES, asgi="common.asgi:create_service_app")
SETTINGS = load_settings({"INTERNAL_SECRET": SECRET, "MAX_BODY_BYTES": str(MAX_BODY)})


def build(checks=None):
    context = Context(SETTINGS, checks)
    return asgi.create_service_app(SETTINGS, SPEC, context), context


@pytest.fixture
def front():
    app, _ = build()
    return falcon.testing.TestClient(app)


def signed(method: str, path: str, body: bytes = b"", query: str = "", **headers) -> dict:
    return {**headers, **auth.signed_headers(SECRET, "front", method, path, query, body, auth.Caller(kind=auth.ADMIN), headers=headers)}


def test_the_spec_builds_the_app_with_its_context():
    app, context = build()
    assert isinstance(app, falcon.asgi.App) and context.started == 1, "start_api once, as a WSGI service"


def test_only_what_the_gateway_signed_passes_and_once(front):
    body = b'{"title": "x"}'
    headers = signed("POST", "/echo", body, "a=1")
    answer = front.simulate_post("/echo", body=body, query_string="a=1", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json == {"caller": auth.ADMIN, "body": '{"title": "x"}', "query": "a=1"}
    replay = front.simulate_post("/echo", body=body, query_string="a=1", headers=headers)
    assert (replay.status_code, replay.json) == (401, {"error": "requests must come through the gateway", "code": "unauthorized"})
    unsigned = front.simulate_post("/echo", body=body)
    assert (unsigned.status_code, unsigned.json) == (401, {"error": "requests must come through the gateway", "code": "unauthorized"})
    other_body = front.simulate_post("/echo", body=b'{"title": "y"}', headers=signed("POST", "/echo", body))
    assert other_body.status_code == 401, "the signature covers the body"
    other_service = auth.signed_headers(SECRET, "web", "POST", "/echo", "", body, auth.Caller())
    assert front.simulate_post("/echo", body=body, headers=other_service).status_code == 401


def test_a_covered_header_is_bound_to_its_signature(front):
    headers = signed("POST", "/echo", Authorization="Bearer k1")
    assert front.simulate_post("/echo", headers={**headers, "Authorization": "Bearer k2"}).status_code == 401
    assert front.simulate_post("/echo", headers=headers).status_code == 200


def test_a_body_past_the_limit_is_refused_before_the_signature(front):
    big = b"x" * (MAX_BODY + 1)
    answer = front.simulate_post("/echo", body=big, headers=signed("POST", "/echo", big))
    assert (answer.status_code, answer.json) == (413, {"error": f"request body exceeds {MAX_BODY} bytes", "code": "payload_too_large"})
    exact = b"x" * MAX_BODY
    assert front.simulate_post("/echo", body=exact, headers=signed("POST", "/echo", exact)).status_code == 200


def test_every_refusal_is_one_json_shape(front):
    def get(query):
        return front.simulate_get("/refuse", query_string=query, headers=signed("GET", "/refuse", query=query))

    assert (get("with=domain").status_code, get("with=domain").json) == (409, {"error": "that name is taken", "code": "conflict"})
    limited = get("with=api")
    assert (limited.status_code, limited.json) == (429, {"error": "too many requests from this address", "code": "http_429"}), "the API's refusal, as it came"
    for query in ("with=bug", "with=page-bug"):
        bug = get(query)
        assert bug.status_code == 500 and bug.json == {"error": f"internal error (request id {bug.headers['X-Request-Id']})",
                                                      "code": "internal_error"}
    missing = front.simulate_get("/nope", headers=signed("GET", "/nope"))
    assert (missing.status_code, missing.json) == (404, {"error": "no such path: /nope", "code": "no_such_path"})
    wrong = front.simulate_delete("/echo", headers=signed("DELETE", "/echo"))
    assert wrong.status_code == 405 and wrong.json["error"].startswith("method DELETE is not allowed here")


def test_request_ids_are_carried_or_made(front):
    assert front.simulate_get("/healthz", headers={"X-Request-Id": "abc"}).headers["X-Request-Id"] == "abc"
    made = front.simulate_get("/healthz").headers["X-Request-Id"]
    assert len(made) == 32 and made != front.simulate_get("/healthz").headers["X-Request-Id"]


def requests_counted(route: str, status: str) -> float:
    return REGISTRY.get_sample_value("feedback_http_requests_total", {"app": "front", "method": "POST", "route": route, "status": status}) or 0


def test_health_and_metrics_are_open_and_count_each_page(front):
    assert front.simulate_get("/healthz").json == {"status": "ok"}
    assert front.simulate_get("/readyz").json == {"status": "ready", "checks": {}}
    # An unsigned request is refused before routing, so under no page (as in the WSGI kit).
    before = requests_counted("/echo", "200"), requests_counted("unmatched", "401")
    front.simulate_post("/echo", headers=signed("POST", "/echo"))
    front.simulate_post("/echo")
    assert (requests_counted("/echo", "200"), requests_counted("unmatched", "401")) == (before[0] + 1, before[1] + 1)
    metrics = front.simulate_get("/metrics")
    assert metrics.status_code == 200 and 'feedback_http_requests_total{app="front"' in metrics.text


def test_ready_follows_the_contexts_readiness_checks():
    warm = {"done": False}

    def warmed():
        if not warm["done"]:
            raise RuntimeError("warming")

    app, _ = build({"index": warmed})
    client = falcon.testing.TestClient(app)
    cold = client.simulate_get("/readyz")
    assert (cold.status_code, cold.json) == (503, {"status": "not ready", "checks": {"index": "unreachable: RuntimeError"}})
    warm["done"] = True
    assert client.simulate_get("/readyz").status_code == 200


def test_a_page_hands_its_request_to_an_asgi_app_within_its_lifespan(front):
    LIFESPAN_STEPS.clear()
    body = b'{"jsonrpc": "2.0"}'
    headers = signed("POST", "/hand-on", body, **{"X-Tag": "t1"})
    answer = front.simulate_post("/hand-on", body=body, headers=headers)
    assert answer.status_code == 202, answer.text
    assert answer.json == {"path": "/hand-on", "body": '{"jsonrpc": "2.0"}', "tag": "t1"}, "the request as the client sent it"
    assert answer.headers["X-Sub"] == "yes" and answer.cookies["a"].value == "1", "the sub-app's headers"
    assert answer.headers["Content-Length"] == str(len(answer.content)) and answer.headers["X-Request-Id"]
    assert requests_counted("/hand-on", "202") >= 1, "counted under the kit's metrics"
    again = front.simulate_post("/hand-on", body=body, headers=signed("POST", "/hand-on", body))
    assert again.status_code == 202, again.text
    assert LIFESPAN_STEPS == ["startup", "shutdown"] * 2, "its lifespan held around each request, and ended"


def test_an_app_that_answers_nothing_is_a_json_500(front):
    answer = front.simulate_post("/silent", headers=signed("POST", "/silent"))
    assert answer.status_code == 500 and answer.json["error"].startswith("internal error (request id ")
