"""Signing secrets at rest, in process against the real local database: stored sealed, read back
in clear by the rules and the sender, secrets stored in clear before sealing still sign, and
answers holding a secret are never kept for an ``Idempotency-Key`` retry."""

from __future__ import annotations

from datetime import datetime, timezone

from bson import ObjectId
from cryptography.fernet import Fernet
from standardwebhooks import Webhook

from common.idempotency import ShownOnce
from common.secretbox import DEV_KEY, SecretBox, reseal_collection
from webhooks.models import Endpoint
from webhooks.repository import WebhookRepository
from webhooks.signing import active_keys, new_secret, signed_headers

from .helpers import URL, manager


def stored(context, hook_id: str) -> dict:
    return context.store.db["endpoints"].find_one({"_id": ObjectId(hook_id)})


def test_signing_secrets_are_stored_sealed_and_read_back_in_clear(context, slug):
    created = context.service.create(manager(slug), slug, {"url": URL, "events": ["webhook.test"]})
    rotated = context.service.rotate(manager(slug), slug, created["id"])
    raw = stored(context, created["id"])
    assert len(raw["secrets"]) == 2
    for secret in (created["secret"], rotated["secret"]):
        assert secret not in str(raw) and secret.split("_", 1)[1] not in str(raw)
    assert all(s["key"].startswith("sealed:") for s in raw["secrets"])
    # What the sender gets signs with the secrets the manager was shown.
    (endpoint,) = context.repo.enabled_in([slug])[slug]
    keys = active_keys(endpoint, datetime.now(timezone.utc))
    assert keys == [rotated["secret"], created["secret"]]
    assert context.repo.endpoints_by_id([endpoint["_id"]])[endpoint["_id"]]["secrets"] == endpoint["secrets"]
    body = b'{"type":"webhook.test"}'
    headers = signed_headers("msg_1", datetime.now(timezone.utc), body, keys)
    Webhook(rotated["secret"]).verify(body, headers)


def test_a_secret_stored_in_clear_before_sealing_still_signs_and_is_resealed(context, slug):
    legacy = new_secret()
    doc = context.repo.new_endpoint(
        workspace=slug, url=URL, events=["webhook.test"], disabled=False,
        secrets=[{"key": legacy, "createdAt": datetime.now(timezone.utc), "expiresAt": None}],
        createdAt=datetime.now(timezone.utc), updatedAt=datetime.now(timezone.utc),
    )
    context.store.db["endpoints"].insert_one(doc)  # as the service stored it before this change
    assert active_keys(context.repo.find_endpoint(slug, doc["_id"]), datetime.now(timezone.utc)) == [legacy]
    reseal_collection(context.store.db["endpoints"], Endpoint.SEALED, context.repo.box)
    raw = stored(context, str(doc["_id"]))
    assert legacy not in str(raw) and raw["secrets"][0]["key"].startswith("sealed:")
    assert active_keys(context.repo.find_endpoint(slug, doc["_id"]), datetime.now(timezone.utc)) == [legacy]


def test_a_repository_under_a_rotated_key_reads_what_the_old_key_sealed(context, slug):
    assert context.repo.box.built_in  # the in-process tests run with the built-in development key
    created = context.service.create(manager(slug), slug, {"url": URL, "events": ["webhook.test"]})
    new_key = Fernet.generate_key().decode()
    endpoints = context.store.db["endpoints"]
    # SECRETS_KEYS=new,old: the old key still opens what it sealed; resealing moves it all to the new one.
    both = WebhookRepository(context.store, SecretBox([new_key, DEV_KEY]))
    assert active_keys(both.find_endpoint(slug, ObjectId(created["id"])), datetime.now(timezone.utc)) == [created["secret"]]
    try:
        assert reseal_collection(endpoints, Endpoint.SEALED, both.box) >= 1
        only_new = WebhookRepository(context.store, SecretBox([new_key]))
        assert active_keys(only_new.find_endpoint(slug, ObjectId(created["id"])), datetime.now(timezone.utc)) == [created["secret"]]
        assert reseal_collection(endpoints, Endpoint.SEALED, both.box) == 0  # nothing left to do
    finally:
        # The other tests' endpoints go back under the test process's key.
        reseal_collection(endpoints, Endpoint.SEALED, SecretBox([DEV_KEY, new_key]))


def test_creation_and_rotation_answers_are_shown_once(context, slug):
    created = context.service.create(manager(slug), slug, {"url": URL, "events": ["webhook.test"]})
    rotated = context.service.rotate(manager(slug), slug, created["id"])
    for answer, words in ((created, "was created"), (rotated, "was rotated")):
        assert isinstance(answer, ShownOnce) and answer["secret"] not in answer.notice
        assert words in answer.notice and f"/webhooks/{created['id']}/rotate-secret" in answer.notice
