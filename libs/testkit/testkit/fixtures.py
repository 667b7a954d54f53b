"""pytest fixtures for the whole repository: a running platform, its DNS, an API client.

The ``stack`` fixture starts the platform once per test session (local MongoDB/Kafka
stand-ins on free ports unless MONGODB_URI / KAFKA_BOOTSTRAP_SERVERS are set, and a local
SMTP server whose Maildir is the ``maildir`` fixture), with the
settings the collected folders ask for through the ``pytest_feedback_stack_env`` hook. Tests
isolate themselves by creating their own workspace (``workspace`` fixture).

Every process of the suite checks the events it writes against its service's contract
(``FEEDBACK_CHECK_EVENTS``, see :mod:`common.events`): the stacks tests start inherit it from
this process's environment, and the in-process contexts get it in their settings.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from devstack import LocalStack
from testkit import hooks
from testkit.api import Api, Workspace, create_workspace
from testkit.dns import Zone, start


RATE_LIMIT_SETTINGS = (
    "RATE_LIMIT_WRITES",
    "RATE_LIMIT_WRITES_PER_ADDRESS",
    "RATE_LIMIT_SEARCHES",
    "RATE_LIMIT_SEARCHES_PER_ADDRESS",
    "RATE_LIMIT_READS",
    "RATE_LIMIT_READS_PER_ADDRESS",
    "RATE_LIMIT_READS_PER_WORKSPACE",
    "RATE_LIMIT_API_KEYS",
    "RATE_LIMIT_AUTH_FAILURES",
    "RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS",
    "RATE_LIMIT_ROUTES",  # every route's own budget ("0/60": all off)
)


CHECK_EVENTS = {"FEEDBACK_CHECK_EVENTS": "1"}


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hooks)


def pytest_configure(config):
    # In the environment rather than in one fixture's settings: a test that starts a platform
    # of its own (a restart, a kill, the chart's rehearsal) checks its events too.
    os.environ.update(CHECK_EVENTS)


@pytest.fixture(scope="session")
def dns_zone() -> Zone:
    """The records of a real DNS server on 127.0.0.1 that the platform's resolvers ask."""
    zone = Zone()
    server, zone.port = start(zone)
    yield zone
    server.stop()


def logs_folder(tmp_path_factory, name: str) -> Path:
    """Where a platform a test starts writes its processes' logs: under ``FEEDBACK_TEST_LOGS``
    (CI prints their tails on a failure) where set, one folder per test process (pytest-xdist's
    workers run side by side), else a temporary folder."""
    kept = os.environ.get("FEEDBACK_TEST_LOGS")
    if not kept:
        return tmp_path_factory.mktemp(name)
    folder = Path(kept) / os.environ.get("PYTEST_XDIST_WORKER", "main") / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def stack(request, tmp_path_factory, dns_zone):
    log_dir = logs_folder(tmp_path_factory, "logs")
    # The shared platform runs without rate limits: tests write far faster than people do.
    # The limits' own tests start a gateway of their own with the defaults (tests/test_abuse.py).
    env: dict[str, str] = {name: "0/60" for name in RATE_LIMIT_SETTINGS}
    for part in request.config.hook.pytest_feedback_stack_env(dns_port=dns_zone.port):
        env.update(part)
    platform = LocalStack(
        mongodb_uri=os.environ.get("MONGODB_URI") or None,
        kafka_bootstrap=os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or None,
        log_dir=log_dir,
        extra_env=env,
        # The platform's mail goes to a local SMTP server keeping it here (``maildir`` fixture).
        mail_dir=tmp_path_factory.mktemp("mail"),
    )
    try:
        platform.start()
    except Exception:
        for log in sorted(log_dir.glob("*.log")):
            print(f"==== {log.name}\n{log.read_text()[-3000:]}")
        platform.stop()
        raise
    yield platform
    platform.stop()


@pytest.fixture(scope="session")
def maildir(stack) -> Path:
    """The Maildir where the ``stack`` platform's mail arrives (``testkit.mail.wait_for_mail``)."""
    return stack.mail_dir


@pytest.fixture(scope="session")
def api(stack) -> Api:
    return Api(stack.url)


@pytest.fixture(scope="session")
def admin_token(stack) -> str:
    return stack.admin_token


@pytest.fixture
def workspace(api, admin_token) -> Workspace:
    return create_workspace(api, admin_token)


@pytest.fixture
def other_workspace(api, admin_token) -> Workspace:
    return create_workspace(api, admin_token, name="Other")


@pytest.fixture(scope="session")
def database(tmp_path_factory) -> str:
    """A MongoDB-protocol server for in-process tests of one service's rules (no Kafka, no
    gateway): ``MONGODB_URI`` where set, else a stand-in of its own. Its URI."""
    if os.environ.get("MONGODB_URI"):
        yield os.environ["MONGODB_URI"]
        return
    local = LocalStack(log_dir=tmp_path_factory.mktemp("database-logs"))
    local.start_mongo()
    yield local.mongodb_uri
    local.stop()


@pytest.fixture(scope="session")
def service_context(database):
    """``service_context(name)``: that service's context (its service layer, repository and
    store), built in this process against ``database`` with its indexes; one per service."""
    from common.config import load_settings
    from common.plugins import load_services

    contexts = {}
    settings = load_settings({"MONGODB_URI": database, "MONGODB_DB_PREFIX": f"unit_{uuid.uuid4().hex[:8]}_", **CHECK_EVENTS})

    def build(name: str):
        if name not in contexts:
            spec = load_services()[name]
            context = spec.create_context(settings)
            context.store.ensure_indexes(spec.model_classes())
            contexts[name] = context
        return contexts[name]

    return build
