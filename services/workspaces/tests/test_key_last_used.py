"""An API key's ``lastUsedAt``, in process against the real local database: set by the identity
check, written at most once a minute per key (no write while the stored time is recent)."""

import uuid
from datetime import timedelta

import pytest

from common import auth
from common.errors import Unauthorized
from common.ids import now
from workspaces import contract

ADMIN = auth.Caller(kind=auth.ADMIN)


@pytest.fixture(scope="module")
def context(service_context):
    return service_context("workspaces")


@pytest.fixture
def slug(context):
    slug = f"unit-{uuid.uuid4().hex[:10]}"
    context.service.create(ADMIN, {"slug": slug, "name": "Unit"})
    return slug


def listed(context, slug, key_id) -> dict:
    return next(k for k in context.service.api_keys(ADMIN, slug)["items"] if k["id"] == key_id)


def test_a_key_shows_when_it_was_last_used_written_at_most_once_a_minute(context, slug, monkeypatch):
    created = context.service.create_key(ADMIN, slug, {"name": "agent"})
    assert created["lastUsedAt"] is None and listed(context, slug, created["id"])["lastUsedAt"] is None
    context.service.identify({"workspace": slug, "apiKey": created["key"]})
    first = listed(context, slug, created["id"])["lastUsedAt"]
    assert first is not None
    # within the minute: no write at all
    writes = []
    real = context.service.repo.mark_key_used
    monkeypatch.setattr(context.service.repo, "mark_key_used", lambda *a: (writes.append(a), real(*a)))
    for _ in range(3):
        context.service.identify({"workspace": slug, "apiKey": created["key"]})
    assert writes == [] and listed(context, slug, created["id"])["lastUsedAt"] == first
    # a stored time older than the precision is replaced, once
    old = now() - timedelta(seconds=contract.KEY_LAST_USED_PRECISION + 5)
    context.service.repo.keys.update_one({"keyId": created["id"]}, {"$set": {"lastUsedAt": old}})
    context.service.identify({"workspace": slug, "apiKey": created["key"]})
    assert len(writes) == 1 and listed(context, slug, created["id"])["lastUsedAt"] > first
    # the conditional update leaves a newer time alone (two checks racing write it once)
    newer = listed(context, slug, created["id"])["lastUsedAt"]
    real(created["id"], now() - timedelta(hours=1), now() - timedelta(hours=2))
    assert listed(context, slug, created["id"])["lastUsedAt"] == newer


def test_a_revoked_or_forged_key_records_no_use(context, slug):
    created = context.service.create_key(ADMIN, slug, {"name": "gone"})
    context.service.revoke_key(ADMIN, slug, created["id"])
    with pytest.raises(Unauthorized):
        context.service.identify({"workspace": slug, "apiKey": created["key"]})
    with pytest.raises(Unauthorized):
        context.service.identify({"workspace": slug, "apiKey": created["key"][:-2] + "xx"})
    assert listed(context, slug, created["id"])["lastUsedAt"] is None
