"""Run an app factory under gunicorn, from code: WSGI apps on gthread workers (the default),
ASGI apps on gunicorn's own asyncio worker (``worker_class=ASGI_WORKER``)."""

from __future__ import annotations

import json
from typing import Callable

from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.http import errors
from gunicorn.workers.gthread import ThreadWorker

from common.config import Settings

# Requests gunicorn refuses before the app sees them, by the status they get.
REFUSED = {
    errors.LimitRequestLine: (414, "URI Too Long", "the request line is too long"),
    errors.LimitRequestHeaders: (431, "Request Header Fields Too Large", "the request headers are too large"),
}
MALFORMED = (
    errors.InvalidRequestLine,
    errors.InvalidRequestMethod,
    errors.InvalidHTTPVersion,
    errors.InvalidHeader,
    errors.InvalidHeaderName,
    errors.InvalidChunkSize,
    errors.ChunkMissingTerminator,
    errors.ObsoleteFolding,
)


class JsonErrorWorker(ThreadWorker):
    """gunicorn's gthread worker, but a request it refuses itself (a request line or headers
    too large, a malformed request) gets the platform's ``{"error": "..."}`` like every other
    error, instead of an HTML page."""

    def handle_error(self, req, client, addr, exc):
        refused = REFUSED.get(type(exc)) or ((400, "Bad Request", f"malformed request: {exc}") if isinstance(exc, MALFORMED) else None)
        if refused is None:
            return super().handle_error(req, client, addr, exc)
        status, reason, message = refused
        body = json.dumps({"error": message, "code": "malformed_request" if status == 400 else "request_too_large"}).encode()
        head = f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        try:
            util.write_nonblock(client, head.encode("latin1") + body)
        except OSError:
            pass  # the client is gone already


WSGI_WORKER = "common.server.JsonErrorWorker"
ASGI_WORKER = "gunicorn.workers.gasgi.ASGIWorker"


class GunicornServer(BaseApplication):
    def __init__(self, app_factory: Callable[[], object], bind: str | list[str], settings: Settings, worker_class: str = WSGI_WORKER):
        self.app_factory = app_factory
        self.options = {
            "bind": [bind] if isinstance(bind, str) else bind,
            "workers": settings.web_concurrency,
            # An ASGI worker serves concurrent requests on its event loop, not on threads.
            "threads": settings.web_threads if worker_class == WSGI_WORKER else 1,
            "worker_class": worker_class,
            "timeout": 60,
            "graceful_timeout": settings.graceful_seconds,
            "keepalive": 75,  # the gateway keeps pooled connections to services open
            # gunicorn's largest request line; the gateway answers a JSON 414 well below it
            "limit_request_line": 8190,
            "accesslog": None,
            "loglevel": settings.log_level.lower(),
        }
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        # Called in each worker after fork, so database and Kafka clients are per process.
        return self.app_factory()
