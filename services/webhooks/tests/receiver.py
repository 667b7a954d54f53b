"""A real webhook receiver for the tests: a threaded http.server on 127.0.0.1.

Each test takes its own path (``receiver.route()``) and tells the receiver the path's
secrets; every request is verified with ``standardwebhooks.Webhook(secret).verify`` against
each secret and kept with the result. A path can be scripted to answer with given statuses,
headers and delays, in order, before it falls back to 200. Only complete requests are kept: a
body shorter than its Content-Length (the connection dropped mid-body) is not a delivery.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0  # > 0: send the status line, then one header byte every `drip` seconds, for a minute


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when it arrived
    verified_with: list[str]  # the path's secrets whose signature verified

    @property
    def id(self) -> str:
        return self.headers.get("webhook-id", "")

    def json(self) -> dict:
        import json

        return json.loads(self.body)


class Route:
    def __init__(self, receiver: "Receiver", path: str):
        self.receiver = receiver
        self.path = path
        self.secrets: list[str] = []
        self.script: list[Reply] = []
        self.default = Reply()
        self.fail_first_attempt = False  # answer 500 the first time each webhook-id comes
        self.seen_ids: set[str] = set()

    @property
    def url(self) -> str:
        return f"{self.receiver.base_url}{self.path}"

    def answer(self, *replies: Reply, then: Reply | None = None) -> "Route":
        with self.receiver.lock:
            self.script.extend(replies)
            if then is not None:
                self.default = then
        return self

    def next_reply(self, webhook_id: str) -> Reply:
        with self.receiver.lock:
            if self.fail_first_attempt and webhook_id not in self.seen_ids:
                self.seen_ids.add(webhook_id)
                return Reply(500)
            return self.script.pop(0) if self.script else self.default

    @property
    def received(self) -> list[Received]:
        with self.receiver.lock:
            return [r for r in self.receiver.requests if r.path == self.path]

    def of_type(self, type_: str) -> list[Received]:
        return [r for r in self.received if r.json().get("type") == type_]


class Receiver:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests: list[Received] = []
        self.routes: dict[str, Route] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if len(body) < length:
                    # The sender died (or gave up) mid-body: that request was never delivered, and a
                    # test reading it back would fail on half a JSON document. Only whole ones count.
                    self.close_connection = True
                    return
                receiver.handle(self, body)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a sender that gave up or was killed resets its connection: expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def route(self) -> Route:
        route = Route(self, f"/hook/{uuid.uuid4().hex}")
        with self.lock:
            self.routes[route.path] = route
        return route

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        route = self.routes.get(handler.path)
        verified = []
        for secret in list(route.secrets if route else []):
            try:
                Webhook(secret).verify(body, headers)
                verified.append(secret)
            except (WebhookVerificationError, ValueError):
                pass
        with self.lock:
            self.requests.append(Received(handler.path, headers, body, time.monotonic(), verified))
        reply = route.next_reply(headers.get("webhook-id", "")) if route else Reply(404)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.drip:
            try:  # each byte comes inside any read timeout; only a deadline on the whole answer ends it
                handler.wfile.write(f"HTTP/1.1 {reply.status} OK\r\nX-Drip: ".encode())
                for _ in range(int(60 / reply.drip)):
                    handler.wfile.write(b"x")
                    handler.wfile.flush()
                    time.sleep(reply.drip)
            except OSError:
                pass  # the sender cut the attempt: what the test wants
            return
        try:
            handler.send_response(reply.status)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        except OSError:
            pass  # the sender gave up (timeout) and closed the connection

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
