"""The local launcher (`make run`): its children die with it, however it dies, and a data
folder another process still holds is reported in one clear line."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from devstack import _bin, free_port
from testkit import wait_for

pytestmark = pytest.mark.reliability


def launch(folder: Path, log: Path) -> subprocess.Popen:
    """``feedback-dev`` in ``folder``, its output to the file ``log``: a pipe nobody reads would
    fill up with the children's logs and block the launcher mid-print, even while it stops."""
    env = {**os.environ, "GATEWAY_PORT": str(free_port())}
    for name in ("MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS"):
        env.pop(name, None)
    with open(log, "w") as out:
        return subprocess.Popen([_bin("feedback-dev")], cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)


def wait_running(launcher: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    def running() -> bool:
        assert launcher.poll() is None, "the launcher exited"
        return "Feedback platform running" in log.read_text()

    try:
        wait_for(running, timeout=timeout, what="the launcher to start")
    except AssertionError as ex:
        raise AssertionError(f"{ex}; its output:\n{log.read_text()[-4000:]}") from None


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_children_die_with_a_killed_launcher_and_the_next_one_starts(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    first = launch(tmp_path, logs / "first.log")
    try:
        wait_running(first, logs / "first.log")
        spawned = children(first.pid)
        # make run's layout: mongo, kafka, the one process of the gateway and the WSGI services,
        # and the MCP server's (docs/architecture.md, "Two layouts")
        assert len(spawned) >= 4, "mongo, kafka, the platform and the MCP server run as its children"
        first.send_signal(signal.SIGKILL)  # no cleanup of its own can run
        first.wait(10)
        wait_for(lambda: not any(alive(p) for p in spawned), timeout=30, what="the children to exit")
    finally:
        first.kill()
    second = launch(tmp_path, logs / "second.log")
    try:
        wait_running(second, logs / "second.log")  # the data folder was released: the next run starts
        held = launch(tmp_path, logs / "held.log")  # a third while the second holds the folder
        held.wait(timeout=60)
        out = (logs / "held.log").read_text()
        assert held.returncode != 0
        assert "is in use by another process" in out and str(tmp_path / ".data" / "mongo") in out
    finally:
        second.send_signal(signal.SIGINT)
        try:
            second.wait(60)
        finally:
            second.kill()  # never leave a launcher behind, even if it did not stop
