"""Run a WSGI app factory under gunicorn (gthread workers), from code."""

from __future__ import annotations

from typing import Callable

from gunicorn.app.base import BaseApplication

from common.config import Settings


class GunicornServer(BaseApplication):
    def __init__(self, app_factory: Callable[[], object], bind: str, settings: Settings):
        self.app_factory = app_factory
        self.options = {
            "bind": bind,
            "workers": settings.web_concurrency,
            "threads": settings.web_threads,
            "worker_class": "gthread",
            "timeout": 60,
            "graceful_timeout": 10,
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
