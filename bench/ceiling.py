"""A trivial Falcon JSON endpoint served exactly like the platform's services: the ceiling."""

import argparse

import falcon

from common.config import load_settings
from common.server import GunicornServer


class Hello:
    def on_get(self, req, resp):
        resp.media = {"hello": "world"}


def create_app() -> falcon.App:
    app = falcon.App()
    app.add_route("/hello", Hello())
    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bind", default="127.0.0.1:8999")
    GunicornServer(create_app, parser.parse_args().bind, load_settings()).run()
