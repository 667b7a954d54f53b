"""The secret box: sealing, clear text from before sealing, key rotation, configuration, and
the reseal command against the real local database."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import datetime, timezone

import pytest
from cryptography.fernet import Fernet
from pymongo import MongoClient

from common.secretbox import DEV_KEY, PREFIX, SecretBox, UnreadableSecret, load_box, reseal_collection

SECRET = "whsec_c2VjcmV0LXRoYXQtbXVzdC1ub3QtbGVhaw=="


def key() -> str:
    return Fernet.generate_key().decode()


def test_a_sealed_secret_opens_and_shows_nothing_of_itself():
    box = SecretBox([key()])
    sealed = box.seal(SECRET)
    assert sealed.startswith(PREFIX) and SECRET not in sealed and SECRET.split("_", 1)[1] not in sealed
    assert box.open(sealed) == SECRET and box.is_current(sealed)
    assert box.seal(SECRET) != sealed  # a fresh IV each time: equal secrets are not recognisable
    assert box.open(None) is None


def test_a_secret_stored_in_clear_before_sealing_opens_as_it_is():
    box = SecretBox([key()])
    assert box.open(SECRET) == SECRET and not box.is_current(SECRET)
    resealed = box.reseal(SECRET)
    assert resealed.startswith(PREFIX) and box.open(resealed) == SECRET


def test_rotation_new_key_first_reseal_then_drop_the_old_key():
    old, new = key(), key()
    sealed_by_old = SecretBox([old]).seal(SECRET)
    during = SecretBox([new, old])  # step 1: SECRETS_KEYS=new,old
    assert during.open(sealed_by_old) == SECRET and not during.is_current(sealed_by_old)
    resealed = during.reseal(sealed_by_old)  # step 2: feedback reseal-secrets
    assert during.is_current(resealed)
    after = SecretBox([new])  # step 3: the old key dropped
    assert after.open(resealed) == SECRET
    with pytest.raises(UnreadableSecret, match="SECRETS_KEYS"):
        after.open(sealed_by_old)  # what was not resealed is lost with the old key: said clearly


def test_secrets_keys_configures_the_box_and_the_first_key_seals():
    first, second = key(), key()
    box = load_box({"SECRETS_KEYS": f" {first} , {second} "})
    assert not box.built_in
    sealed = box.seal(SECRET)
    assert SecretBox([first]).open(sealed) == SECRET
    with pytest.raises(UnreadableSecret):
        SecretBox([second]).open(sealed)


def test_without_secrets_keys_only_development_gets_the_built_in_key():
    for dev in ({"FEEDBACK_DEV": "1", "INTERNAL_SECRET": "set-in-production"}, {}):
        box = load_box(dev)
        assert box.built_in and SecretBox([DEV_KEY]).open(box.seal(SECRET)) == SECRET
    with pytest.raises(SystemExit, match="refusing to start: SECRETS_KEYS is unset"):
        load_box({"INTERNAL_SECRET": "set-in-production"})
    with pytest.raises(SystemExit, match="refusing to start"):
        load_box({"INTERNAL_SECRET": "set-in-production", "FEEDBACK_DEV": "0", "SECRETS_KEYS": ""})


def test_an_invalid_key_is_refused_without_printing_the_keys():
    good = key()
    with pytest.raises(SystemExit) as refused:
        load_box({"SECRETS_KEYS": f"{good},not-a-fernet-key", "FEEDBACK_DEV": "1"})
    message = str(refused.value)
    assert "key 2 is not a Fernet key" in message and good not in message and "not-a-fernet-key" not in message


@pytest.fixture
def db(database):
    client = MongoClient(database, tz_aware=True)
    name = f"unit_box_{uuid.uuid4().hex[:8]}"
    yield client[name]
    client.drop_database(name)
    client.close()


def test_reseal_rewrites_every_value_at_the_paths_and_nothing_else(db):
    old, new = key(), key()
    at = datetime.now(timezone.utc).replace(microsecond=0)
    docs = [
        {"_id": 1, "settings": {"ssoSecret": SecretBox([old]).seal("s1"), "theme": "dark"}, "name": "a"},
        {"_id": 2, "settings": {"ssoSecret": "s2-in-clear"}},
        {"_id": 3, "settings": {"ssoSecret": None}},
        {"_id": 4, "name": "no settings"},
        {"_id": 5, "secrets": [{"key": "k1", "createdAt": at}, {"key": SecretBox([old]).seal("k2"), "createdAt": at}]},
    ]
    db.things.insert_many(docs)
    box = SecretBox([new, old])
    assert reseal_collection(db.things, ("settings.ssoSecret", "secrets.key"), box) == 3
    after = {d["_id"]: d for d in db.things.find()}
    only_new = SecretBox([new])
    assert only_new.open(after[1]["settings"]["ssoSecret"]) == "s1" and after[1]["settings"]["theme"] == "dark"
    assert only_new.open(after[2]["settings"]["ssoSecret"]) == "s2-in-clear"
    assert after[3] == docs[2] and after[4] == docs[3]
    assert [only_new.open(s["key"]) for s in after[5]["secrets"]] == ["k1", "k2"]
    assert [s["createdAt"] for s in after[5]["secrets"]] == [at, at]
    assert reseal_collection(db.things, ("settings.ssoSecret", "secrets.key"), box) == 0  # nothing left


def test_the_reseal_command_rewrites_every_services_sealed_fields(database):
    old, new = key(), key()
    prefix = f"unit_reseal_{uuid.uuid4().hex[:8]}_"
    client = MongoClient(database, tz_aware=True)
    try:
        workspaces, endpoints = client[prefix + "workspaces"].workspaces, client[prefix + "webhooks"].endpoints
        workspaces.insert_many([
            {"_id": "clear", "name": "C", "settings": {"ssoSecret": "clear-sso-secret-from-before-sealing"}},
            {"_id": "old", "name": "O", "settings": {"ssoSecret": SecretBox([old]).seal("sso-under-the-old-key")}},
        ])
        endpoints.insert_one({"workspace": "old", "secrets": [{"key": "whsec_clear"}, {"key": SecretBox([old]).seal("whsec_old")}]})
        env = {
            **os.environ,
            "MONGODB_URI": database,
            "MONGODB_DB_PREFIX": prefix,
            "SECRETS_KEYS": f"{new},{old}",
            "FEEDBACK_DEV": "1",
        }
        run = subprocess.run(
            [sys.executable, "-m", "common.cli", "reseal-secrets"], env=env, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stderr
        assert "workspaces.workspaces: 2 document(s) resealed" in run.stdout
        assert "webhooks.endpoints: 1 document(s) resealed" in run.stdout
        only_new = SecretBox([new])
        ssos = {d["_id"]: only_new.open(d["settings"]["ssoSecret"]) for d in workspaces.find()}
        assert ssos == {"clear": "clear-sso-secret-from-before-sealing", "old": "sso-under-the-old-key"}
        (endpoint,) = endpoints.find()
        assert [only_new.open(s["key"]) for s in endpoint["secrets"]] == ["whsec_clear", "whsec_old"]
    finally:
        for name in (prefix + "workspaces", prefix + "webhooks"):
            client.drop_database(name)
        client.close()
