"""Secrets outside development: each process checks the secrets its role uses, and only those,
for a minimum strength; a refusal is one line naming the setting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from common.config import GATEWAY, INIT, MIN_SECRET_LENGTH, SERVICE, load_settings

STRONG = "s" * MIN_SECRET_LENGTH
FEEDBACK = str(Path(sys.executable).parent / "feedback")


def refusal(env: dict, role: str) -> str | None:
    try:
        load_settings(env).require_secrets(role)
    except SystemExit as ex:
        return str(ex)
    return None


def test_a_service_needs_the_internal_secret_and_not_the_operator_token():
    assert refusal({"INTERNAL_SECRET": STRONG}, SERVICE) is None
    message = refusal({"FEEDBACK_ADMIN_TOKEN": STRONG}, SERVICE)
    assert message.startswith("refusing to start: INTERNAL_SECRET is unset") and "FEEDBACK_ADMIN_TOKEN" not in message


def test_the_gateway_needs_the_operator_token_and_the_internal_secret():
    assert refusal({"INTERNAL_SECRET": STRONG, "FEEDBACK_ADMIN_TOKEN": STRONG}, GATEWAY) is None
    assert "FEEDBACK_ADMIN_TOKEN is unset" in refusal({"INTERNAL_SECRET": STRONG}, GATEWAY)
    assert "FEEDBACK_ADMIN_TOKEN and INTERNAL_SECRET are unset" in refusal({}, GATEWAY)


def test_the_default_role_is_the_gateways():
    """``require_secrets()`` without a role, as the gateway calls it."""
    with pytest.raises(SystemExit, match="FEEDBACK_ADMIN_TOKEN is unset"):
        load_settings({"INTERNAL_SECRET": STRONG}).require_secrets()


def test_init_needs_no_secret():
    assert refusal({}, INIT) is None


@pytest.mark.parametrize("role", [SERVICE, GATEWAY])
def test_a_short_secret_is_refused_outside_development(role):
    short = "x" * (MIN_SECRET_LENGTH - 1)
    env = {"INTERNAL_SECRET": short, "FEEDBACK_ADMIN_TOKEN": STRONG}
    message = refusal(env, role)
    assert message == (
        f"refusing to start: INTERNAL_SECRET is shorter than {MIN_SECRET_LENGTH} characters; set a random value of "
        f"{MIN_SECRET_LENGTH} characters or more, or FEEDBACK_DEV=1 on a development machine"
    )
    assert "\n" not in message
    assert refusal({**env, "FEEDBACK_DEV": "1"}, role) is None, "development allows it"
    assert refusal({"INTERNAL_SECRET": "x", "FEEDBACK_ADMIN_TOKEN": STRONG}, role).startswith("refusing to start: INTERNAL_SECRET is shorter")


def test_unset_and_short_are_named_together():
    message = refusal({"INTERNAL_SECRET": "short"}, GATEWAY)
    assert message.startswith("refusing to start: FEEDBACK_ADMIN_TOKEN is unset (the built-in value is public); "
                              f"INTERNAL_SECRET is shorter than {MIN_SECRET_LENGTH} characters;")


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_the_service_commands_check_the_service_role(command):
    """Through the real command: past the secrets check, an unknown service is the next refusal."""
    def run(env):
        done = subprocess.run([FEEDBACK, command, "no-such-service"], env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", **env},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode != 0
        return done.stderr.strip().splitlines()[-1]

    assert run({"INTERNAL_SECRET": STRONG}).startswith("unknown service 'no-such-service'"), "no operator token needed"
    assert run({"INTERNAL_SECRET": "short", "FEEDBACK_ADMIN_TOKEN": STRONG}).startswith("refusing to start: INTERNAL_SECRET is shorter")
