"""The local platform's secrets: one per purpose, as strong as outside development, kept per
data folder by ``make run`` and handed to every local process."""

from __future__ import annotations

import stat

from cryptography.fernet import Fernet

from common.config import MIN_SECRET_LENGTH
from devstack import SECRET_FILES, LocalStack, data_folder_secrets

SECRETS = ("FEEDBACK_ADMIN_TOKEN", "INTERNAL_SECRET", "GATEWAY_SECRET", "WEB_COOKIE_SECRET", "SECRETS_KEYS")


def test_every_local_process_gets_every_secret_once_each():
    stack = LocalStack(mongodb_uri="mongodb://127.0.0.1:1", kafka_bootstrap="127.0.0.1:2")
    env = stack.env()
    values = [env[name] for name in SECRETS]
    assert len(set(values)) == len(values), "one secret per purpose"
    assert all(len(v) >= MIN_SECRET_LENGTH for v in values)
    Fernet(env["SECRETS_KEYS"])  # a valid Fernet key
    assert (env["INTERNAL_SECRET"], env["FEEDBACK_ADMIN_TOKEN"]) == (stack.internal_secret, stack.admin_token)


def test_make_run_keeps_each_secret_in_its_data_folder(tmp_path):
    first = data_folder_secrets(tmp_path, {})
    assert set(first) == set(SECRETS)
    assert data_folder_secrets(tmp_path, {}) == first, "kept across runs"
    for name, filename in SECRET_FILES.items():
        path = tmp_path / filename
        assert path.read_text() == first[name]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{filename} is readable by its owner only"
    Fernet(first["SECRETS_KEYS"])
    assert all(len(v) >= MIN_SECRET_LENGTH for v in first.values())
    chosen = data_folder_secrets(tmp_path, {"INTERNAL_SECRET": "from-the-environment"})
    assert chosen == {**first, "INTERNAL_SECRET": "from-the-environment"}, "the environment wins"


def test_free_ports_come_from_below_the_ephemeral_range_and_are_never_handed_twice_on_the_machine():
    """No outgoing connection can take a port of the platform's between its choice and its bind
    (clients get ephemeral ports, 32768 and up on Linux), and one process never hands a port twice."""
    import subprocess
    import sys

    from devstack import PORTS, free_port

    ports = [free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    assert all(p in PORTS for p in ports)
    # another process choosing meanwhile gets none of them (the claims are the machine's)
    theirs = subprocess.run([sys.executable, "-c", "from devstack import free_port; print(*(free_port() for _ in range(300)))"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert not set(map(int, theirs)) & set(ports)
    low, _ = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
    assert max(PORTS) < low
