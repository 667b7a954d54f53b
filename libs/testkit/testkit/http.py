"""A small HTTP server the tests run on loopback, to play the other side of an outbound fetch
(an identity provider, a webhook receiver turned hostile): a handler per path, every request
recorded, and answers that can redirect, drip or never end."""

from __future__ import annotations

import json
import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class Server:
    """HTTP on ``host`` (its URL names ``name``, the host by default). ``routes`` maps a path
    (with its query, or without) to ``handler(request)``; anything else goes to ``fallback``.
    Every request is recorded in ``requests`` (method, path, body, headers with lower-case names).
    ``stop`` is set when the server closes: a handler that drips or hangs waits on it."""

    def __init__(self, host: str = "127.0.0.1", name: str | None = None):
        self.routes: dict = {}
        self.fallback = lambda req: req.answer(404, b"no")
        self.requests: list[dict] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                server.requests.append({"method": self.command, "path": self.path, "body": self.body,
                                        "headers": {k.lower(): v for k, v in self.headers.items()}})
                handler = server.routes.get(self.path) or server.routes.get(urlsplit(self.path).path) or server.fallback
                try:
                    handler(self)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_POST = handle_any

            def answer(self, status: int, body: bytes = b"ok", headers: dict | None = None):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                for header, value in (headers or {}).items():
                    self.send_header(header, value)
                self.end_headers()
                self.wfile.write(body)

            def send_json(self, status: int, body, headers: dict | None = None):
                self.answer(status, json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})})

            def redirect(self, location: str, status: int = 302):
                self.answer(status, b"", {"Location": location})

        self.http = ThreadingHTTPServer((host, 0), Handler)
        self.http.daemon_threads = True
        self.port = self.http.server_address[1]
        self.url = f"http://{name or host}:{self.port}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def hits(self) -> list[tuple[str, str]]:
        """(method, path without query) of every request so far."""
        return [(r["method"], urlsplit(r["path"]).path) for r in self.requests]

    def close(self):
        self.stop.set()
        self.http.shutdown()
        self.http.server_close()


@contextmanager
def tcp_server(answer: bytes):
    """A TCP server on 127.0.0.1 that reads a little, sends ``answer`` (any bytes: an SSH
    banner, half an HTTP answer) and closes, per connection; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(2)
                    conn.recv(65536)
                    conn.sendall(answer)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
