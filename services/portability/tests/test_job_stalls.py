"""A job whose database or services stall runs again from the start, as after a crash, and
fails, named, only after the last pause (portability.jobs)."""

from __future__ import annotations

import pytest
from pymongo.errors import NetworkTimeout

from portability import jobs


class Repo:
    def __init__(self):
        self.job = {"_id": "j1", "workspace": "acme", "attempts": 1}

    def claim(self, token, at, lease):
        return self.job


class Flaky(jobs.Jobs):
    """Stalls ``stalls`` times, then finishes; records each run's fresh state and the outcome."""

    def __init__(self, stalls: int):
        super().__init__(Repo(), config=type("Config", (), {"lease_seconds": 60})())
        self.stalls, self.runs, self.outcome = stalls, [], None

    def start(self, job, token):
        return {"fresh": True}

    def run(self, job, token, state):
        self.runs.append(dict(state))
        state["fresh"] = False
        if len(self.runs) <= self.stalls:
            raise NetworkTimeout("127.0.0.1:27017: timed out")
        self.outcome = "succeeded"

    def fail(self, job, token, state, error):
        self.outcome = error


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    monkeypatch.setattr(jobs, "STALL_PAUSES", (0, 0))
    monkeypatch.setattr(jobs.time, "sleep", lambda seconds: None)


def test_a_stalled_job_runs_again_from_the_start_and_finishes():
    job = Flaky(stalls=2)
    assert job.run_next() and job.outcome == "succeeded"
    assert job.runs == [{"fresh": True}] * 3  # each run started over, not from the stalled one's state


def test_a_job_that_keeps_stalling_fails_naming_the_stall():
    job = Flaky(stalls=5)
    job.run_next()
    assert len(job.runs) == 3 and job.outcome == {"item": "job", "message": "127.0.0.1:27017: timed out"}
