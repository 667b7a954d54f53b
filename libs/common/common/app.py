"""The Falcon app factory every service and the gateway use.

One place decides how the platform answers: JSON in and out, every failure as
``{"error": "..."}`` with a fitting status (never a bare 500 page), request ids,
``/healthz``, ``/readyz`` and ``/metrics``.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import time
import uuid
from typing import Callable, Iterable

import falcon
import falcon.media
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from pymongo.errors import ConnectionFailure, PyMongoError

from common import auth
from common.config import Settings
from common.dbmetrics import RoundTrips
from common.errors import FeedbackError, PayloadTooLarge, Unauthorized
from common.idempotency import Idempotency
from common.ids import canonical_id
from common.plugins import ServiceContext, ServiceSpec, resolve
from common.public_api import ApiError
from common import validation

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-Id"
OPEN_PATHS = ("/healthz", "/readyz", "/metrics")

REQUESTS = Counter("feedback_http_requests_total", "HTTP requests served", ["app", "method", "route", "status"])
LATENCY = Histogram("feedback_http_request_seconds", "HTTP request latency", ["app", "method", "route"])


def _loads(text: str):
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


JSON = falcon.media.JSONHandler(loads=_loads)


class RequestId:
    """Carry the caller's X-Request-Id through, or make one, and echo it back."""

    def process_request(self, req, resp):
        req.context.request_id = req.get_header(REQUEST_ID_HEADER) or uuid.uuid4().hex
        req.context.started = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header(REQUEST_ID_HEADER, req.context.get("request_id", ""))


class Metrics:
    def __init__(self, app_name: str):
        self.app_name = app_name

    def process_response(self, req, resp, resource, req_succeeded):
        route = req.uri_template or "unmatched"
        REQUESTS.labels(self.app_name, req.method, route, resp.status_code).inc()
        started = req.context.get("started")
        if started is not None:
            LATENCY.labels(self.app_name, req.method, route).observe(time.perf_counter() - started)


class InternalAuth:
    """Accept only requests the gateway (or a sibling service) signed for this service, with
    this method, path, query, body and covered headers, moments ago, and each only once in this
    process; expose the caller."""

    def __init__(self, secret: str, service: str, max_body: int, nonces: auth.Nonces | None = None):
        self.secret = secret
        self.service = service
        self.max_body = max_body
        self.nonces = nonces or auth.Nonces()

    def process_request(self, req, resp):
        if req.path in OPEN_PATHS:
            return
        body = _read_body(req, self.max_body)
        headers = {h: req.get_header(h) for h in auth.SIGNED_REQUEST_HEADERS}
        if not auth.verify(self.secret, self.service, req.method, req.path, req.query_string, body, headers, nonces=self.nonces):
            raise Unauthorized("requests must come through the gateway")
        req.context.caller = auth.Caller.from_header(headers[auth.CALLER_HEADER])
        req.context.body = body


class CanonicalIds:
    """Every id in a path in the one spelling the API uses (lower-case hex), at the edge of
    every service, so no rule below ever sees two spellings of one document."""

    def process_resource(self, req, resp, resource, params):
        for name, value in params.items():
            params[name] = canonical_id(value)


def _read_body(req, limit: int) -> bytes:
    """The request's body, read once to check its signature and put back for the resource."""
    length = req.content_length or 0
    if length > limit:
        raise PayloadTooLarge(f"request body exceeds {limit} bytes")
    data = req.env["wsgi.input"].read(length) if length else b""
    req.env["wsgi.input"] = req.stream = io.BytesIO(data)
    return data


def _serialize_http_error(req, resp, exception: falcon.HTTPError):
    resp.content_type = falcon.MEDIA_JSON
    message, code = _describe_http_error(req, exception)
    resp.data = json.dumps({"error": message, "code": code}).encode()


def _describe_http_error(req, ex: falcon.HTTPError) -> tuple[str, str]:
    """Falcon's own refusal as the platform's message and code."""
    if isinstance(ex, falcon.HTTPRouteNotFound):
        return f"no such path: {req.path}", "no_such_path"
    if isinstance(ex, falcon.HTTPMethodNotAllowed):
        allowed = ex.headers.get("Allow", "") if ex.headers else ""
        return f"method {req.method} is not allowed here (allowed: {allowed})", "method_not_allowed"
    if isinstance(ex, falcon.MediaNotFoundError):
        return "request body is required", "body_required"
    if isinstance(ex, falcon.MediaMalformedError):
        return "request body is not valid JSON", "invalid_json"
    if isinstance(ex, falcon.HTTPUnsupportedMediaType):
        return "request body must be application/json", "unsupported_media_type"
    return ex.description or ex.title, "http_" + str(ex.status_code)


def _json_answer(resp, status, body: dict) -> None:
    """An error's JSON answer, whatever the responder had begun (a page that set an HTML type
    before it failed would otherwise have its error body refused by Falcon as a 415)."""
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.media = body


def _handle_feedback_error(req, resp, ex: FeedbackError, params):
    for name, value in ex.headers.items():
        resp.set_header(name, value)
    # A refusal of the request's validation lists every field's problem besides the one line
    # (``errors``); every other refusal is ``{"error"}`` alone (docs/architecture.md, status 400).
    _json_answer(resp, ex.status, ex.body())


def _handle_api_error(req, resp, ex: ApiError, params):
    """The ``/v1`` call a front service made for this request was refused: its status and message."""
    _json_answer(resp, ex.status, {"error": ex.message, "code": ex.code})


def _handle_database_down(req, resp, ex: PyMongoError, params):
    log.warning("database unavailable: %s", ex)
    resp.set_header("Retry-After", "1")
    _json_answer(resp, falcon.HTTP_503, {"error": "database unavailable, try again shortly", "code": "unavailable"})


def _handle_unexpected(req, resp, ex: Exception, params):
    if isinstance(ex, falcon.HTTPError):
        raise ex  # Falcon's own errors keep their status; the serializer shapes the body.
    request_id = req.context.get("request_id", "")
    log.exception("unhandled error on %s %s (request %s)", req.method, req.path, request_id)
    _json_answer(resp, falcon.HTTP_500, {"error": f"internal error (request id {request_id})", "code": "internal_error"})


class PersonalData:
    """POST <ServiceSpec.personal_data> ``{userId, workspace}``: what the service keeps about a
    user (the people service asks, for a person's download: docs/privacy.md), as its context's
    ``personal_data`` says."""

    def __init__(self, context: ServiceContext):
        self.context = context

    def on_post(self, req, resp):
        query = validation.check(validation.media(req), validation.PERSONAL_DATA_QUERY)
        resp.media = self.context.personal_data(query["userId"], query.get("workspace"))


class Health:
    def on_get(self, req, resp):
        resp.media = {"status": "ok"}


class Ready:
    """Ready when the database answers. Kafka is reported, not required: writes keep
    succeeding through the outbox while it is down, so taking the API out of rotation
    would turn a delay into an outage."""

    def __init__(self, checks: dict[str, Callable[[], None]], required: Iterable[str]):
        self.checks = checks
        self.required = set(required)

    def on_get(self, req, resp):
        report, ok = {}, True
        for name, check in self.checks.items():
            try:
                check()
                report[name] = "ok"
            except Exception as ex:  # noqa: BLE001 - any failure means "not reachable"
                report[name] = f"unreachable: {ex.__class__.__name__}"
                ok = ok and name not in self.required
        resp.status = falcon.HTTP_200 if ok else falcon.HTTP_503
        resp.media = {"status": "ready" if ok else "not ready", "checks": report}


class MetricsEndpoint:
    def on_get(self, req, resp):
        resp.content_type = CONTENT_TYPE_LATEST
        resp.data = generate_latest()


def kafka_reachable(settings: Settings) -> Callable[[], None]:
    def check() -> None:
        host, _, port = settings.kafka_bootstrap_servers.split(",")[0].strip().rpartition(":")
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=1):
            pass

    return check


def create_app(
    name: str,
    middleware: list | None = None,
    checks: dict[str, Callable[[], None]] | None = None,
    required_checks: Iterable[str] = (),
) -> falcon.App:
    """A Falcon app with the platform's JSON, errors, request ids, health and metrics."""
    app = falcon.App(middleware=[RequestId(), Metrics(name), *(middleware or [])])
    app.req_options.media_handlers[falcon.MEDIA_JSON] = JSON
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = JSON
    app.req_options.strip_url_path_trailing_slash = True
    app.set_error_serializer(_serialize_http_error)
    # Most specific class wins (Falcon picks by MRO), so order here does not matter.
    app.add_error_handler(Exception, _handle_unexpected)
    app.add_error_handler(ConnectionFailure, _handle_database_down)
    app.add_error_handler(FeedbackError, _handle_feedback_error)
    app.add_error_handler(ApiError, _handle_api_error)
    app.add_route("/healthz", Health())
    app.add_route("/readyz", Ready(checks or {}, required_checks))
    app.add_route("/metrics", MetricsEndpoint())
    return app


def create_service_app(settings: Settings, spec: ServiceSpec, context: ServiceContext | None = None) -> falcon.App:
    """Build a service's app from its spec: public routes under /v1, internal ones as-is. A
    service without a database (a front service: ``context.store`` None) is ready when alive,
    unless its context names ``readiness()`` checks, and keeps no idempotency records."""
    context = context if context is not None else spec.create_context(settings)
    context.start_api()
    stored = context.store is not None
    checks = {"mongodb": context.store.ping, "kafka": kafka_reachable(settings)} if stored else {}
    # A service may stay out of rotation while it warms up: its context's optional ``readiness``.
    warming = context.readiness() if hasattr(context, "readiness") else {}
    middleware = [
        # The gateway holds each route to its own limit (Route.max_body); here, the largest any
        # of this service's routes takes, since a request is read before it is routed.
        InternalAuth(settings.internal_secret, spec.name,
                     max([settings.max_body_bytes, *(r.max_body for r in (*spec.routes, *spec.pages) if r.max_body)])),
        RoundTrips(),
        CanonicalIds(),
        *([Idempotency(context.store.db, settings.idempotency_seconds)] if stored else []),
    ]
    app = create_app(spec.name, middleware=middleware, checks={**checks, **warming},
                     required_checks=[*(["mongodb"] if stored else []), *warming])
    for route in spec.routes:
        app.add_route("/v1" + route.template, resolve(route.resource)(context))
    for route in (*spec.internal_routes, *spec.pages):
        app.add_route(route.template, resolve(route.resource)(context))
    return app
