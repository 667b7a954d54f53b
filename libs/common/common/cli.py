"""The ``feedback`` command: serve a service, run its workers, or initialise. (The whole platform
on one machine is ``feedback-dev``, of the devstack package, which the image does not carry.)

    feedback serve SERVICE [--bind HOST:PORT]   a service's API under gunicorn
    feedback worker SERVICE [NAME ...]          its background workers (all by default)
    feedback init                               create Kafka topics and MongoDB indexes
    feedback services                           list discovered services and their workers
    feedback events                             the event catalog as Markdown (docs/events.md)
    feedback COMMAND [ARGS ...]                 a command a plugin contributes (ServiceSpec.commands),
                                                e.g. feedback mcp --base-url URL --api-key KEY
"""

from __future__ import annotations

import argparse
import logging
import sys

from common.config import INIT, SERVICE, load_settings
from common.plugins import load_services, resolve


def _spec(name: str):
    services = load_services()
    if name not in services:
        raise SystemExit(f"unknown service '{name}'; discovered: {', '.join(services) or 'none'}")
    return services[name]


def serve(args) -> None:
    from common.server import ASGI_WORKER, GunicornServer

    settings = load_settings()
    settings.require_secrets(SERVICE)
    spec = _spec(args.service)
    # The app is imported and built in gunicorn's worker, after the fork: the master only
    # watches it and stays small.
    if spec.asgi:
        GunicornServer(lambda: resolve(spec.asgi)(settings, spec), args.bind, settings, worker_class=ASGI_WORKER).run()
    else:
        GunicornServer(lambda: wsgi_app(settings, spec), args.bind, settings).run()


def wsgi_app(settings, spec):
    from common.app import create_service_app

    return create_service_app(settings, spec)


def worker(args) -> None:
    from common.workers import run_workers

    settings = load_settings()
    settings.require_secrets(SERVICE)
    run_workers(settings, _spec(args.service), args.names or None)


def init(args) -> None:
    from common.bootstrap import initialise

    settings = load_settings()
    settings.require_secrets(INIT)  # topics and indexes: no internal call, no operator
    for line in initialise(settings, load_services()):
        print(line)


def services(args) -> None:
    for name, spec in load_services().items():
        print(f"{name}: routes={len(spec.routes)} publishes={list(spec.publishes)} workers={spec.worker_names()}")


def events(args) -> None:
    from common.eventdocs import catalog_markdown

    print(catalog_markdown(load_services()), end="")


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kafka").setLevel(max(logging.WARNING, logging.getLevelName(level)))  # chatty at INFO


def main(argv: list[str] | None = None) -> None:
    settings = load_settings()
    configure_logging(settings.log_level)
    argv = sys.argv[1:] if argv is None else argv
    # A plugin's command parses its own arguments; its code is imported only when it runs.
    commands = {name: (spec.name, ref) for spec in load_services().values() for name, ref in spec.commands.items()}
    if argv and argv[0] in commands:
        resolve(commands[argv[0]][1])(argv[1:])
        return
    parser = argparse.ArgumentParser(prog="feedback", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="serve a service's API")
    p.add_argument("service")
    p.add_argument("--bind", default="127.0.0.1:8000")
    p.set_defaults(func=serve)
    p = sub.add_parser("worker", help="run a service's background workers")
    p.add_argument("service")
    p.add_argument("names", nargs="*")
    p.set_defaults(func=worker)
    sub.add_parser("init", help="create Kafka topics and MongoDB indexes").set_defaults(func=init)
    sub.add_parser("services", help="list discovered services").set_defaults(func=services)
    sub.add_parser("events", help="print the event catalog as Markdown").set_defaults(func=events)
    for name, (service, _) in commands.items():
        sub.add_parser(name, help=f"a command of the {service} plugin (feedback {name} --help)")
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main(sys.argv[1:])
