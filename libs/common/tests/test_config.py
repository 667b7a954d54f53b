"""Settings: each declared once and read by one loader, which names a refused variable; and
secrets outside development, where each process checks the secrets its role uses, and only
those, for a minimum strength (a refusal is one line naming the setting)."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pytest

from common.config import (
    GATEWAY,
    INIT,
    MIN_SECRET_LENGTH,
    SERVICE,
    Settings,
    as_list,
    as_url,
    from_env,
    from_env_prefix,
    load,
    load_settings,
    positive,
)

STRONG = "s" * MIN_SECRET_LENGTH
FEEDBACK = str(Path(sys.executable).parent / "feedback")
ROOT = Path(__file__).resolve().parents[3]


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


# -- one declaration per setting: the loader, and every setting of the platform -----------------


@dataclass(frozen=True)
class Sample:
    count: int = from_env("SAMPLE_COUNT", 3, positive(int))
    names: tuple[str, ...] = from_env("SAMPLE_NAMES", (), as_list)
    url: str = from_env("SAMPLE_URL", "http://default", as_url)
    key: str = from_env("SAMPLE_KEY", "built-in", secret=True)
    urls: Mapping[str, str] = from_env_prefix("SAMPLE_URL_", as_url)
    derived: str = "not read"  # a field without a variable keeps its default


def test_each_declared_field_takes_its_variable_converted_or_its_default():
    assert load(Sample, {}) == Sample()
    assert Sample.count == 3, "the declared default stays the class's"
    sample = load(Sample, {"SAMPLE_COUNT": "7", "SAMPLE_NAMES": " a, b ,", "SAMPLE_URL": "http://x/",
                           "SAMPLE_URL_POSTS": "http://posts/", "SAMPLE_URL_EMPTY": "", "OTHER": "1"})
    assert (sample.count, sample.names, sample.url, sample.urls) == (7, ("a", "b"), "http://x", {"posts": "http://posts"})
    assert load(Sample, {"SAMPLE_COUNT": ""}).count == 3, "empty is unset"


def test_a_default_given_to_the_loader_holds_only_while_the_variable_is_unset():
    assert load(Sample, {}, url="http://from-other-settings").url == "http://from-other-settings"
    assert load(Sample, {"SAMPLE_URL": "http://set/"}, url="http://from-other-settings").url == "http://set"


def test_a_refused_value_stops_the_process_naming_the_variable():
    with pytest.raises(SystemExit, match=r"^environment variable SAMPLE_COUNT='0' is invalid: must be positive$"):
        load(Sample, {"SAMPLE_COUNT": "0"})
    with pytest.raises(SystemExit, match="SAMPLE_COUNT='many'"):
        load(Sample, {"SAMPLE_COUNT": "many"})


def test_a_secret_is_never_shown():
    sample = load(Sample, {"SAMPLE_KEY": "hunter2-hunter2"})
    assert sample.key == "hunter2-hunter2" and "hunter2" not in repr(sample)
    settings = load_settings({"INTERNAL_SECRET": "i" * 40, "FEEDBACK_ADMIN_TOKEN": "a" * 40, "SECRETS_KEYS": "k" * 44})
    assert not {"i" * 40, "a" * 40, "k" * 44} & set(repr(settings).split("'"))


def settings_classes() -> list[type]:
    """Every settings dataclass of the platform: the shared one, the gateway's and each
    discovered service's ``<package>.config`` (a service without settings has none)."""
    from common.plugins import load_services
    from gateway.config import GatewayConfig

    classes = [Settings, GatewayConfig]
    for spec in load_services().values():
        try:
            module = importlib.import_module(spec.context.split(".")[0] + ".config")
        except ModuleNotFoundError:
            continue
        classes += [c for c in vars(module).values() if dataclasses.is_dataclass(c) and c.__module__ == module.__name__]
    return classes


def declared_variables() -> list[str]:
    return [f.metadata.get("variable") or f.metadata["prefix"]
            for cls in settings_classes() for f in dataclasses.fields(cls) if "convert" in f.metadata]


def test_every_setting_is_declared_once_and_documented():
    variables = declared_variables()
    assert len(variables) > 60 and "POSTS_READ_ENGINE" in variables and "RATE_LIMIT_WRITES" in variables
    assert len(variables) == len(set(variables)), "one variable declared twice"
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs/services").glob("*.md"))
    assert [v for v in variables if f"`{v}" not in docs] == [], "settings missing from the README and docs/services"
