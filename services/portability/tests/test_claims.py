"""The export worker's claims, in process against a database: one worker runs an export; a
worker that died gives it back when its lease ends, and its late writes are refused."""

from __future__ import annotations

import uuid

import pytest

from common.ids import now
from common.plugins import Route, load_services
from portability import contract


def test_a_claim_is_one_workers_until_its_lease_ends(service_context):
    repo = service_context("portability").service.repo
    workspace = f"claims-{uuid.uuid4().hex[:8]}"
    job = repo.create(workspace, None, now())
    # Jobs of other tests may wait in this database: claim until this one is taken.
    first = next(c for c in iter(lambda: repo.claim("first", now(), -1.0), None) if c["_id"] == job["_id"])
    assert first["status"] == "running" and first["attempts"] == 1
    # The lease given was already over (as if the first worker died long ago): claimed again.
    again = next(c for c in iter(lambda: repo.claim("second", now(), 60.0), None) if c["_id"] == job["_id"])
    assert again["attempts"] == 2 and again["claim"] == "second"
    assert not repo.advance(job["_id"], "first", now(), 60.0, {"progress": {"done": 5, "total": 12}}), "the dead worker lost it"
    assert not repo.finish(job["_id"], "first", {"status": "succeeded"})
    assert repo.advance(job["_id"], "second", now(), 60.0, {"progress": {"done": 1, "total": 12}})
    while (other := repo.claim("third", now(), 60.0)) is not None:
        assert other["_id"] != job["_id"], "a live lease is not claimed"
    assert repo.finish(job["_id"], "second", {"status": "failed"})
    assert repo.find(workspace, job["_id"])["status"] == "failed"


def test_a_route_names_its_own_body_limit_or_none():
    """Route.max_body (the import route's 32 MiB): a positive number of bytes, or None for the
    deployment's MAX_BODY_BYTES."""
    imports = next(r for r in load_services()["portability"].routes if r.template.endswith("/imports"))
    assert imports.max_body == contract.IMPORT_MAX_BYTES
    assert Route("/x", "m:C", ("POST",)).max_body is None
    for wrong in (0, -1, 1.5, True, "32"):
        with pytest.raises(ValueError, match="max_body"):
            Route("/x", "m:C", ("POST",), max_body=wrong)
