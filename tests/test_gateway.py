"""The gateway: routing from plugins, errors as {error}, limits, auth hand-off, docs."""

import gzip

import falcon
import falcon.testing
import requests

from common.config import Settings
from common.plugins import Route, ServiceSpec, hookimpl, load_services, make_plugin_manager
from testkit import assert_error, wait_for
from gateway.app import create_app
from gateway.config import GatewayConfig

# An app with no platform behind it counts its budgets in its own memory.
ALONE = GatewayConfig(rate_limit_storage="memory://")


def test_openapi_documents_exactly_the_routes(api):
    doc = api.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    documented = {(path, method) for path, ops in doc["paths"].items() for method in ops if method != "parameters"}
    served = {("/v1/openapi.json", "get"), ("/v1", "get")}  # the gateway's own
    for spec in load_services().values():
        for route in spec.routes:
            served |= {("/v1" + route.template, m.lower()) for m in route.methods}
    assert served - documented == set(), "routes without documentation"
    assert documented - served == set(), "documented routes that do not exist"


def test_openapi_is_a_valid_document(api):
    from openapi_spec_validator import validate

    validate(api.get("/openapi.json").json())


def test_unknown_path_and_wrong_method(api, workspace):
    assert_error(api.get("/nothing/here"), 404)
    assert_error(api.get(f"{workspace.path}/nothing"), 404)
    r = api.delete(f"{workspace.path}/branding")
    assert_error(r, 405)
    assert "GET" in r.headers.get("Allow", "")


def test_body_size_limit(api, workspace):
    big = {"brandVoice": "x" * (300 * 1024)}
    assert_error(api.patch(f"{workspace.path}/settings", key=workspace.key, json=big), 413)

    def chunks():  # no Content-Length: the gateway must still stop reading at the limit
        for _ in range(300):
            yield b"x" * 1024

    r = api.patch(f"{workspace.path}/settings", key=workspace.key, data=chunks(), headers={"Content-Type": "application/json"})
    assert_error(r, 413)


def test_chunked_body_within_limit_is_forwarded_whole(api, workspace):
    def chunks():
        yield b'{"brandVoice": "'
        yield b"y" * 1500
        yield b'"}'

    r = api.patch(f"{workspace.path}/settings", key=workspace.key, data=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["brandVoice"] == "y" * 1500


def test_request_id_is_echoed(api, workspace):
    r = api.get(f"{workspace.path}/branding", headers={"X-Request-Id": "req-123"})
    assert r.headers["X-Request-Id"] == "req-123"
    assert api.get(f"{workspace.path}/branding").headers["X-Request-Id"]


def test_services_refuse_calls_that_bypass_the_gateway(stack, workspace):
    url = stack.service_url("workspaces") + f"/v1/workspaces/{workspace.slug}/settings"
    r = requests.patch(url, json={"theme": "dark"}, headers={"X-Feedback-Caller": '{"kind":"admin"}'}, timeout=5)
    assert_error(r, 401)
    r = requests.patch(url, json={"theme": "dark"}, headers={"X-Feedback-Caller": '{"kind":"admin"}', "X-Feedback-Signature": "0" * 64}, timeout=5)
    assert_error(r, 401)


def test_health_ready_metrics(stack):
    for port in [stack.gateway_port, *stack.service_ports.values()]:
        base = f"http://127.0.0.1:{port}"
        assert requests.get(base + "/healthz", timeout=5).json() == {"status": "ok"}
    for port in stack.service_ports.values():  # services are reached inside the cluster only
        assert requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).status_code == 200
    ready = requests.get(stack.service_url("workspaces") + "/readyz", timeout=5)
    assert ready.status_code == 200 and ready.json()["checks"] == {"mongodb": "ok", "kafka": "ok"}
    # posts holds itself out of rotation until its slow-to-build query indexes are warm
    ready = requests.get(stack.service_url("posts") + "/readyz", timeout=5)
    assert ready.status_code == 200 and ready.json()["checks"] == {"mongodb": "ok", "kafka": "ok", "query-indexes": "ok"}
    metrics = requests.get(f"http://127.0.0.1:{stack.gateway_metrics_port}/metrics", timeout=5).text
    assert "feedback_http_requests_total" in metrics


def test_the_gateway_keeps_its_metrics_off_the_public_listener(stack):
    assert_error(requests.get(f"{stack.url}/metrics", timeout=5), 404)


def test_service_down_answers_503_then_recovers(api, stack, workspace):
    stack.processes["workspaces-api"].stop()
    try:
        assert_error(api.get(f"{workspace.path}/branding"), 503)
    finally:
        stack.processes["workspaces-api"].start()
    wait_for(lambda: api.get(f"{workspace.path}/branding").status_code == 200, timeout=30, what="workspaces to return")


class HelloPlugin:
    @hookimpl
    def register_service(self):
        route = Route("/workspaces/{slug}/hello", "hello.resources:Hello", ("GET",))
        return ServiceSpec(name="hello", context="hello.plugin:create_context", routes=[route])


def test_a_new_plugin_adds_routes_without_gateway_changes():
    services = load_services(make_plugin_manager(load_entry_points=False, plugins=[HelloPlugin()]))
    client = falcon.testing.TestClient(create_app(Settings(), services, config=ALONE))
    # No SERVICE_URL_HELLO is configured: the route exists (not 404) and answers 503.
    r = client.simulate_get("/v1/workspaces/acme/hello")
    assert r.status_code == 503 and "hello" in r.json["error"]
    assert client.simulate_post("/v1/workspaces/acme/hello").status_code == 405
    assert client.simulate_get("/v1/workspaces/acme/goodbye").status_code == 404


def test_round_trips_are_counted_for_services_and_not_published(api, stack, workspace):
    from common import auth

    path = f"/v1/workspaces/{workspace.slug}/branding"
    headers = auth.signed_headers(stack.internal_secret, "workspaces", "GET", path, "", None, auth.Caller())
    direct = requests.get(stack.service_url("workspaces") + path, headers=headers, timeout=5)
    assert direct.status_code == 200 and direct.headers["X-Db-Round-Trips"] == "1"
    assert "X-Db-Round-Trips" not in api.get(f"{workspace.path}/branding").headers


def test_odd_characters_in_paths_are_forwarded_intact(api, workspace):
    assert_error(api.get("/workspaces/%E2%9C%93%20x/branding"), 404)
    r = api.delete(f"{workspace.path}/api-keys/%F2%B2%AC%A4%0F%20%3A", key=workspace.key)
    assert_error(r, 404)


def test_overlong_uri_is_a_json_414(api, workspace):
    assert_error(api.get(f"{workspace.path}/posts?q=" + "x" * 5000), 414)
    # Past gunicorn's own request-line limit the server refuses it before the app: still JSON.
    assert_error(api.get(f"{workspace.path}/posts?q=" + "x" * 9000), 414)
    r = api.get(f"{workspace.path}/branding", headers={"X-Big": "y" * 9000})
    assert r.status_code in (400, 431) and set(r.json()) == {"error", "code"}


class SitePlugin:
    @hookimpl
    def register_service(self):
        page = Route("/b/{slug}", "site.resources:Board", ("GET", "POST"))
        return ServiceSpec(name="site", context="site.plugin:create_context", pages=[page], site_root="/b/{slug}")


def test_a_plugins_pages_are_routed_outside_v1_without_gateway_changes():
    services = load_services(make_plugin_manager(load_entry_points=False, plugins=[SitePlugin()]))
    client = falcon.testing.TestClient(create_app(Settings(), services, config=ALONE))
    r = client.simulate_get("/b/acme")  # routed to the site's service, not configured here
    assert r.status_code == 503 and "site" in r.json["error"]
    assert client.simulate_delete("/b/acme").status_code == 405
    assert client.simulate_get("/b/NOT_A_SLUG").status_code == 404
    assert client.simulate_get("/v1/b/acme").status_code == 404


class DocsPlugin:
    @hookimpl
    def register_service(self):
        page = Route("/v1/docs", "docs.resources:Reference", ("GET",))
        return ServiceSpec(name="docs", context="docs.plugin:create_context", pages=[page])


def test_the_api_index_names_the_document_and_the_docs_a_plugin_serves():
    document = {"title": "Feedback platform API", "version": "1.0"}
    alone = falcon.testing.TestClient(create_app(Settings(), {}, config=ALONE))
    r = alone.simulate_get("/v1")
    assert r.status_code == 200 and r.json == {"name": document["title"], "version": document["version"],
                                               "openapi": "/v1/openapi.json"}  # nobody serves /v1/docs here
    assert alone.simulate_get("/v1/").json == r.json
    assert alone.simulate_post("/v1").status_code == 405
    services = load_services(make_plugin_manager(load_entry_points=False, plugins=[DocsPlugin()]))
    client = falcon.testing.TestClient(create_app(Settings(), services, config=ALONE))
    assert client.simulate_get("/v1").json["docs"] == "/v1/docs"
    assert client.simulate_get("/v1/docs").status_code == 503  # a page of the plugin's (not configured here)


def test_pages_go_gzipped_to_a_browser_that_takes_it(stack, workspace):
    """A site's text answers (pages, the stylesheet) are gzipped for a client that accepts gzip,
    the same bytes once unpacked; a client that does not, or refuses it with q=0, gets them as
    they are; small answers are not packed."""
    css = f"{stack.url}/b/{workspace.slug}/static/site.css"
    plain = requests.get(css, headers={"Accept-Encoding": "identity"}, timeout=10)
    assert plain.status_code == 200 and "Content-Encoding" not in plain.headers
    packed = requests.get(css, headers={"Accept-Encoding": "br, gzip;q=0.8"}, timeout=10, stream=True)
    raw = packed.raw.read(decode_content=False)
    assert packed.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(raw) == plain.content and len(raw) < len(plain.content) / 3
    refused = requests.get(css, headers={"Accept-Encoding": "gzip;q=0"}, timeout=10)
    assert "Content-Encoding" not in refused.headers
    board = requests.get(f"{stack.url}/b/{workspace.slug}", headers={"Accept-Encoding": "gzip"}, timeout=10)
    assert board.headers.get("Content-Encoding") == "gzip" and "<html" in board.text  # requests unpacks it
    robots = requests.get(f"{stack.url}/b/{workspace.slug}/robots.txt", headers={"Accept-Encoding": "gzip"}, timeout=10)
    assert robots.status_code == 200 and len(robots.content) < 1024 and "Content-Encoding" not in robots.headers
