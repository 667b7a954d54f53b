"""``feedback-gateway [--bind HOST:PORT]``: serve the gateway under gunicorn."""

import argparse

from common.cli import configure_logging
from common.config import load_settings
from common.server import GunicornServer
from gateway.app import get_app


def main(argv=None) -> None:
    settings = load_settings()
    configure_logging(settings.log_level)
    parser = argparse.ArgumentParser(prog="feedback-gateway")
    parser.add_argument("--bind", default="127.0.0.1:8080")
    args = parser.parse_args(argv)
    GunicornServer(get_app, args.bind, settings).run()
