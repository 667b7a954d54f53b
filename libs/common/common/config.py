"""Settings read once from the environment into frozen dataclasses.

Each setting is declared once, as a field of a settings dataclass that names its environment
variable, its default and how its text is converted (:func:`from_env`); one loader,
:func:`load`, reads every declared field. The shared settings are :class:`Settings` below;
each service and the gateway declare their own in their ``config.py``. Nothing else reads
``os.environ``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping, TypeVar

from common.addresses import parse_address, parse_smtp_url

T = TypeVar("T")

# What a declared field's metadata holds (read by ``load`` alone).
_VARIABLE, _PREFIX, _CONVERT, _SECRET = "variable", "prefix", "convert", "secret"


def from_env(variable: str, default: Any, convert: Callable[[str], Any] = str, *, secret: bool = False) -> Any:
    """Declare a settings field read from the environment variable ``variable``: its text
    through ``convert`` when set and not empty, else ``default``. ``convert`` refuses a value by
    raising ``ValueError`` with the reason. A ``secret`` is left out of the dataclass's repr and
    its value out of a refusal."""
    return field(default=default, repr=not secret, metadata={_VARIABLE: variable, _CONVERT: convert, _SECRET: secret})


def from_env_prefix(prefix: str, convert: Callable[[str], Any] = str) -> Any:
    """Declare a mapping read from every variable named ``<prefix><KEY>`` that is not empty:
    ``{key in lower case: convert(value)}``."""
    return field(default_factory=dict, metadata={_PREFIX: prefix, _CONVERT: convert, _SECRET: False})


def load(cls: type[T], environ: Mapping[str, str] | None = None, **defaults: Any) -> T:
    """The settings dataclass ``cls`` read from ``environ`` (the process's environment by default).

    Each field declared with :func:`from_env` takes its variable's converted value; a variable
    unset or empty leaves the field its default: ``defaults[field]`` when given (a default that
    depends on other settings), else the declared one. A value its converter refuses stops the
    process with one line naming the variable. Checks of the whole belong in ``__post_init__``.
    """
    env = os.environ if environ is None else environ
    values = dict(defaults)
    for f in fields(cls):
        convert = f.metadata.get(_CONVERT)
        if convert is None:
            continue  # not read from the environment
        if _PREFIX in f.metadata:
            prefix = f.metadata[_PREFIX]
            values[f.name] = {
                name[len(prefix) :].lower(): _converted(name, raw, convert, secret=False)
                for name, raw in env.items()
                if name.startswith(prefix) and raw
            }
        elif env.get(f.metadata[_VARIABLE]):
            name = f.metadata[_VARIABLE]
            values[f.name] = _converted(name, env[name], convert, f.metadata[_SECRET])
    return cls(**values)


def _converted(variable: str, raw: str, convert: Callable[[str], Any], secret: bool) -> Any:
    try:
        return convert(raw)
    except ValueError as ex:
        shown = variable if secret else f"{variable}={raw!r}"
        raise SystemExit(f"environment variable {shown} is invalid: {ex}") from ex


def as_bool(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def as_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def as_url(value: str) -> str:
    """A base URL without its trailing slash, so paths are joined to it with one."""
    return value.rstrip("/")


def as_smtp_url(value: str) -> str:
    """``SMTP_URL`` as given, once the mailer's parser takes it (it raises with the reason)."""
    parse_smtp_url(value)
    return value.strip()


def as_mail_sender(value: str) -> str:
    """``MAIL_FROM`` as given, once it reads as one address (``Name <addr@domain>`` or ``addr@domain``)."""
    parse_address(value)
    return value.strip()


def positive(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """``convert``, refusing a value that is not above 0."""

    def check(raw: str) -> Any:
        value = convert(raw)
        if value <= 0:
            raise ValueError("must be positive")
        return value

    return check


def between(low: int, high: int) -> Callable[[str], int]:
    """An integer from ``low`` to ``high``, both included."""

    def check(raw: str) -> int:
        value = int(raw)
        if not low <= value <= high:
            raise ValueError(f"it must be between {low} and {high}")
        return value

    return check


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

    mongodb_uri: str = from_env("MONGODB_URI", "mongodb://127.0.0.1:27017/?directConnection=true")
    db_prefix: str = from_env("MONGODB_DB_PREFIX", "feedback_")
    kafka_bootstrap_servers: str = from_env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
    kafka_partitions: int = from_env("KAFKA_PARTITIONS", 4, int)
    # Signs and verifies every internal call: the gateway and every service's API and workers.
    internal_secret: str = from_env("INTERNAL_SECRET", "dev-internal-secret", secret=True)
    # The operator's token: only the gateway reads it (authenticating a bearer as the operator).
    admin_token: str = from_env("FEEDBACK_ADMIN_TOKEN", "dev-admin-token", secret=True)
    # Keys of the secrets stored encrypted (``common.secretbox``, which checks them): only the
    # processes that store such secrets are given them.
    secrets_keys: tuple[str, ...] = from_env("SECRETS_KEYS", (), as_list, secret=True)
    # Each service's API by name: SERVICE_URL_POSTS is ``service_urls["posts"]``.
    service_urls: Mapping[str, str] = from_env_prefix("SERVICE_URL_", as_url)
    public_base_url: str = from_env("PUBLIC_BASE_URL", "http://127.0.0.1:8080")
    # Where mail goes (``common.mail``): smtp://[user:password@]host[:port] (STARTTLS when
    # offered) or smtps:// (implicit TLS); None: mail waits in its queue. It may hold a password.
    smtp_url: str | None = from_env("SMTP_URL", None, as_smtp_url, secret=True)
    mail_from: str = from_env("MAIL_FROM", "Feedback <feedback@localhost>", as_mail_sender)
    # How long a mail worker holds the messages it claimed (``common.mail``): a worker that dies
    # leaves them to the next after this. It stops a batch at half of it, so sends never overlap.
    mail_lease_seconds: float = from_env("MAIL_LEASE_SECONDS", 120.0, positive(float))
    # The wait before a failed send is tried again, doubling at each failure up to an hour.
    mail_retry_seconds: float = from_env("MAIL_RETRY_SECONDS", 10.0, positive(float))
    max_body_bytes: int = from_env("MAX_BODY_BYTES", 256 * 1024, int)
    proxy_connect_timeout: float = from_env("PROXY_CONNECT_TIMEOUT", 2.0, float)
    proxy_read_timeout: float = from_env("PROXY_READ_TIMEOUT", 30.0, float)
    auth_cache_seconds: float = from_env("AUTH_CACHE_SECONDS", 10.0, float)
    log_level: str = from_env("LOG_LEVEL", "INFO")
    web_concurrency: int = from_env("WEB_CONCURRENCY", 2, int)
    web_threads: int = from_env("WEB_THREADS", 8, int)
    # How long a stopping server lets requests in flight finish (gunicorn's graceful timeout). An
    # idle keep-alive connection holds an ASGI worker this long too: the local platform stops in 2.
    graceful_seconds: int = from_env("GRACEFUL_SECONDS", 10, positive(int))
    # Development only (the local launcher and the tests set it): built-in and short secrets are allowed.
    dev_mode: bool = from_env("FEEDBACK_DEV", False, as_bool)
    # How long a POST's Idempotency-Key is remembered with its answer.
    idempotency_seconds: int = from_env("IDEMPOTENCY_SECONDS", 24 * 3600, int)
    # Tests only (the test kit sets it): every event written to an outbox is validated against
    # its service's contract (``EVENTS``), and one off its schema fails the write.
    check_events: bool = from_env("FEEDBACK_CHECK_EVENTS", False, as_bool)

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
    return load(Settings, environ)
