"""Settings read once from the environment into frozen dataclasses.

Every environment variable the platform reads is declared here (shared ones) or in a
service's own ``config.py`` through :func:`setting`. Nothing else reads ``os.environ``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


def as_bool(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def as_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def setting(environ: Mapping[str, str], key: str, default: Any, convert: Callable[[str], Any] = str):
    """Return ``environ[key]`` converted, or ``default`` when unset or empty."""
    raw = environ.get(key)
    if raw is None or raw == "":
        return default
    try:
        return convert(raw)
    except ValueError as ex:
        raise SystemExit(f"environment variable {key}={raw!r} is invalid: {ex}") from ex


MIN_SECRET_LENGTH = 32

# Kinds of process, by the shared secrets each uses (``Settings.require_secrets``); the chart
# gives each Deployment these and no others.
GATEWAY = "gateway"  # authenticates the operator, signs every call it forwards
SERVICE = "service"  # a service's API or workers: verify the gateway's calls, sign their own
INIT = "init"  # ``feedback init``: topics and indexes, no call signed or checked
ROLE_SECRETS = {
    GATEWAY: ("FEEDBACK_ADMIN_TOKEN", "INTERNAL_SECRET"),
    SERVICE: ("INTERNAL_SECRET",),
    INIT: (),
}


def require_strong_secrets(secrets: Mapping[str, tuple[str, str]], dev_mode: bool) -> None:
    """Stop the process, with one line naming each offending setting, when outside development a
    secret (``{NAME: (value, built-in value)}``) is its public built-in value or is shorter than
    ``MIN_SECRET_LENGTH`` characters. Any process with a secret of its own can check it here."""
    if dev_mode:
        return
    unset = [name for name, (value, builtin) in secrets.items() if not value or value == builtin]
    short = [name for name, (value, builtin) in secrets.items() if name not in unset and len(value) < MIN_SECRET_LENGTH]
    problems = []
    if unset:
        problems.append(f"{_names(unset)} {'is' if len(unset) == 1 else 'are'} unset (the built-in value is public)")
    if short:
        problems.append(f"{_names(short)} {'is' if len(short) == 1 else 'are'} shorter than {MIN_SECRET_LENGTH} characters")
    if problems:
        raise SystemExit(
            f"refusing to start: {'; '.join(problems)}; set a random value of {MIN_SECRET_LENGTH} characters or more, "
            "or FEEDBACK_DEV=1 on a development machine"
        )


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class Settings:
    """Settings every process shares. See the README's configuration table."""

    mongodb_uri: str = "mongodb://127.0.0.1:27017/?directConnection=true"
    db_prefix: str = "feedback_"
    kafka_bootstrap_servers: str = "127.0.0.1:9092"
    kafka_partitions: int = 4
    # Signs and verifies every internal call: the gateway and every service's API and workers.
    internal_secret: str = "dev-internal-secret"
    # The operator's token: only the gateway reads it (authenticating a bearer as the operator).
    admin_token: str = "dev-admin-token"
    service_urls: Mapping[str, str] = field(default_factory=dict)
    public_base_url: str = "http://127.0.0.1:8080"
    max_body_bytes: int = 256 * 1024
    proxy_connect_timeout: float = 2.0
    proxy_read_timeout: float = 30.0
    auth_cache_seconds: float = 10.0
    log_level: str = "INFO"
    web_concurrency: int = 2
    web_threads: int = 8
    # Development only (the local launcher and the tests set it): built-in and short secrets are allowed.
    dev_mode: bool = False
    # How long a POST's Idempotency-Key is remembered with its answer.
    idempotency_seconds: int = 24 * 3600

    def service_url(self, name: str) -> str | None:
        return self.service_urls.get(name)

    def require_secrets(self, role: str = GATEWAY) -> None:
        """Refuse to run with a weak secret outside development (anyone could sign as the
        gateway, or act as the operator): each secret ``role`` uses (``ROLE_SECRETS``), and only
        those, must be set to at least ``MIN_SECRET_LENGTH`` characters."""
        values = {"FEEDBACK_ADMIN_TOKEN": (self.admin_token, Settings.admin_token),
                  "INTERNAL_SECRET": (self.internal_secret, Settings.internal_secret)}
        require_strong_secrets({name: values[name] for name in ROLE_SECRETS[role]}, self.dev_mode)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if environ is None else environ
    urls = {
        key[len("SERVICE_URL_") :].lower(): value.rstrip("/")
        for key, value in env.items()
        if key.startswith("SERVICE_URL_") and value
    }
    return Settings(
        mongodb_uri=setting(env, "MONGODB_URI", Settings.mongodb_uri),
        db_prefix=setting(env, "MONGODB_DB_PREFIX", Settings.db_prefix),
        kafka_bootstrap_servers=setting(env, "KAFKA_BOOTSTRAP_SERVERS", Settings.kafka_bootstrap_servers),
        kafka_partitions=setting(env, "KAFKA_PARTITIONS", Settings.kafka_partitions, int),
        internal_secret=setting(env, "INTERNAL_SECRET", Settings.internal_secret),
        admin_token=setting(env, "FEEDBACK_ADMIN_TOKEN", Settings.admin_token),
        service_urls=urls,
        public_base_url=setting(env, "PUBLIC_BASE_URL", Settings.public_base_url),
        max_body_bytes=setting(env, "MAX_BODY_BYTES", Settings.max_body_bytes, int),
        proxy_connect_timeout=setting(env, "PROXY_CONNECT_TIMEOUT", Settings.proxy_connect_timeout, float),
        proxy_read_timeout=setting(env, "PROXY_READ_TIMEOUT", Settings.proxy_read_timeout, float),
        auth_cache_seconds=setting(env, "AUTH_CACHE_SECONDS", Settings.auth_cache_seconds, float),
        log_level=setting(env, "LOG_LEVEL", Settings.log_level),
        web_concurrency=setting(env, "WEB_CONCURRENCY", Settings.web_concurrency, int),
        web_threads=setting(env, "WEB_THREADS", Settings.web_threads, int),
        dev_mode=setting(env, "FEEDBACK_DEV", Settings.dev_mode, as_bool),
        idempotency_seconds=setting(env, "IDEMPOTENCY_SECONDS", Settings.idempotency_seconds, int),
    )
