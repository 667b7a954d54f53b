"""What exports and imports share as jobs: claim the next one waiting (or abandoned past its
lease), give up on one that was claimed too often, run it, and record its failure. A run that
lost its claim (it stalled past its lease and another worker started the job again) stops
without writing its end: the other run owns the job now."""

from __future__ import annotations

import logging
import time
import uuid

from common.consumer import TRANSIENT
from common.ids import now

from portability import contract

log = logging.getLogger(__name__)


# The pauses before a job that stalled on the database or a service runs again (a loaded stand-in
# can time out for seconds; docs/benchmarks.md, "Import"), then it fails.
STALL_PAUSES = (2, 5, 15, 30)


class LostClaim(Exception):
    """Another worker holds the job now: this run's work is dropped."""


class JobFailed(Exception):
    """A failure the job's input is to blame for (a file that cannot be read), not the code:
    the job fails naming ``item``, with no stack trace in the log."""

    item = "file"


class Jobs:
    """A kind of job (``what``: ``export`` or ``import``) run by the worker; a subclass says how
    one runs (``run``) and how its failure is written (``fail``). ``start`` makes what both are
    given for one run (an import's counts and errors so far)."""

    what = "job"

    def __init__(self, repo, config):
        self.repo, self.config = repo, config

    def run_next(self) -> bool:
        """Claim the next job waiting (or abandoned) and run it; whether there was one."""
        token = uuid.uuid4().hex
        job = self.repo.claim(token, now(), self.config.lease_seconds)
        if job is None:
            return False
        state = self.start(job, token)
        if job["attempts"] > contract.MAX_ATTEMPTS:
            self.fail(job, token, state, {"item": self.what,
                                          "message": f"stopped after {contract.MAX_ATTEMPTS} attempts that did not finish"})
            return True
        try:
            self._run_through_stalls(job, token, state)
        except LostClaim:
            log.warning("%s %s of %s was taken over by another worker", self.what, job["_id"], job["workspace"])
        except JobFailed as ex:
            self.fail(job, token, state, {"item": ex.item, "message": str(ex)})
        except Exception as ex:  # noqa: BLE001 - any failure ends this job, named in its errors
            log.exception("%s %s of %s failed", self.what, job["_id"], job["workspace"])
            self.fail(job, token, state, {"item": self.what, "message": str(ex) or ex.__class__.__name__})
        return True

    def _run_through_stalls(self, job: dict, token: str, state) -> None:
        """Run the job; where the database or a service stalls (a timeout, a 503), run it
        again from the start after a pause, as a worker that died would be: a run writes what
        it brings keyed by the source's ids, so a second run changes what the first wrote and
        adds the rest. The last stall fails the job, named."""
        for pause in (*STALL_PAUSES, None):
            try:
                self.run(job, token, state)
                return
            except TRANSIENT as ex:
                if pause is None:
                    raise
                log.warning("%s %s of %s stalled (%s); running it again in %s s", self.what, job["_id"],
                            job["workspace"], ex.__class__.__name__, pause)
                time.sleep(pause)
                state = self.start(job, token)

    def start(self, job: dict, token: str):
        return None

    def run(self, job: dict, token: str, state) -> None:
        raise NotImplementedError

    def fail(self, job: dict, token: str, state, error: dict) -> None:
        raise NotImplementedError
