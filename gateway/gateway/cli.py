"""``feedback-gateway [--bind HOST:PORT] [--metrics-bind HOST:PORT] [--with-services]``: serve the
gateway under gunicorn; with ``--with-services``, every WSGI service and its workers in the same
process too (``make run``'s layout: gateway.single_process)."""

import argparse

from common.cli import configure_logging
from common.config import load_settings, require_strong_secrets
from common.server import GunicornServer
from gateway.config import DEV_GATEWAY_SECRET, load_config


# The apps are imported by the factories, which gunicorn calls in its worker after the fork: its
# master process, which only watches the worker, stays the size of the interpreter and gunicorn
# (docs/benchmarks.md, "Everyday operations, third cut").
def gateway_app(metrics_port):
    from gateway.app import get_app

    return get_app(metrics_port)


def platform_app(settings, services, metrics_port):
    from gateway.single_process import services_app

    return services_app(settings, services, gateway_app(metrics_port))


def main(argv=None) -> None:
    settings = load_settings()
    configure_logging(settings.log_level)
    settings.require_secrets()
    require_strong_secrets({"GATEWAY_SECRET": (load_config().gateway_secret, DEV_GATEWAY_SECRET)}, settings.dev_mode)
    parser = argparse.ArgumentParser(prog="feedback-gateway")
    parser.add_argument("--bind", default="127.0.0.1:8080")
    parser.add_argument("--metrics-bind", default=None, help="HOST:PORT of an internal listener that also serves /metrics")
    parser.add_argument("--with-services", action="store_true",
                        help="serve every WSGI service (on its SERVICE_URL_<NAME>) and run its workers in this process too")
    args = parser.parse_args(argv)
    binds = [args.bind] + ([args.metrics_bind] if args.metrics_bind else [])
    metrics_port = int(args.metrics_bind.rpartition(":")[2]) if args.metrics_bind else None
    if not args.with_services:
        GunicornServer(lambda: gateway_app(metrics_port), binds, settings).run()
        return
    from common.plugins import load_services
    from gateway.single_process import service_binds

    services = load_services()
    binds += list(service_binds(settings, services).values())
    GunicornServer(lambda: platform_app(settings, services, metrics_port), binds, settings).run()
