"""``feedback-gateway [--bind HOST:PORT]``: serve the gateway under gunicorn."""

import argparse
import logging

from common.config import load_settings
from common.server import GunicornServer
from gateway.app import get_app


def main(argv=None) -> None:
    settings = load_settings()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="feedback-gateway")
    parser.add_argument("--bind", default="127.0.0.1:8080")
    args = parser.parse_args(argv)
    GunicornServer(get_app, args.bind, settings).run()
