"""Read access to the database yields no credential: after every kind of secret the API hands
out (a workspace's first key, more API keys and grants, a webhook's signing secret and its
rotation, chosen and generated SSO secrets), each POST sent twice with the same
``Idempotency-Key``, no document of any database on the server holds one of them.

A retry of a request whose answer held a secret is a 409 saying the resource was created and
how to find it, never a replay of the secret and never a second resource.
"""

from __future__ import annotations

import json
import uuid

from pymongo import MongoClient

from common.config import Settings, load_settings
from common.kafka import make_consumer
from testkit import assert_error, create_workspace, unique_slug, wait_for

# A public address literal: registering it needs no DNS, and an endpoint subscribed to test
# pings only is never called.
HOOK = {"url": "https://93.184.215.14/hook", "events": ["webhook.test"]}


class Calls:
    """Each POST sent twice with the same Idempotency-Key and body; what the first answers
    carried is collected, and what each retry answered is checked once the database was."""

    def __init__(self, api):
        self.api = api
        self.secrets: list[str] = []
        self.retries: list[tuple] = []  # (first answer, retry, expected status, words the refusal says)

    def twice(self, path: str, key: str, body: dict | None, status: int, words: str, secret: str) -> dict:
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        first, again = (self.api.post(path, key=key, json=body, headers=headers) for _ in range(2))
        self.retries.append((first, again, status, words))
        answer = first.json() if first.status_code == status else {}
        if answer.get(secret):
            self.secrets.append(answer[secret])
        return answer

    def check_retries(self) -> None:
        """Each first answer is the expected one; each retry is a 409 that says the resource was
        created and that its secret is shown only once."""
        for first, again, status, words in self.retries:
            assert first.status_code == status, first.text
            message = assert_error(again, 409)
            assert "shown only once" in message and words in message, message


def credential_parts(secret: str) -> set[str]:
    """The secret, and its random part alone (``fbk_<id>_<random>``, ``whsec_<base64>``): that
    part is the credential, however it were stored."""
    if secret.startswith("fbk_"):
        return {secret, secret.split("_", 2)[2]}
    if secret.startswith("whsec_"):
        return {secret, secret[len("whsec_") :]}
    return {secret}


def every_document(uri: str):
    """(database, collection, JSON) of every document on the server."""
    with MongoClient(uri) as client:
        for database in client.list_database_names():
            for collection in client[database].list_collection_names():
                for doc in client[database][collection].find():
                    yield database, collection, json.dumps(doc, default=str)


def workspace_events(stack, slug: str, version: int) -> list[str]:
    """Every event on feedback.workspaces (as JSON) once ``slug``'s snapshot ``version`` is there."""
    consumer = make_consumer(Settings(kafka_bootstrap_servers=stack.kafka_bootstrap), f"test-{uuid.uuid4().hex}", ["feedback.workspaces"])
    events: list[dict] = []
    try:
        def arrived():
            for records in consumer.poll(timeout_ms=500).values():
                events.extend(json.loads(r.value) for r in records)
            return any(e["workspace"] == slug and e["data"].get("version") == version for e in events)

        # A bound, not a speed: a new group reads the topic from its start, every workspace the
        # suite made before, and on a loaded machine that took past 30 s once.
        wait_for(arrived, timeout=90, what=f"version {version} of workspace {slug} on Kafka")
    finally:
        consumer.close()
    return [json.dumps(e) for e in events]


def test_no_secret_the_api_returned_is_stored_anywhere(api, admin_token, stack):
    calls = Calls(api)

    # A workspace and its first key.
    slug = unique_slug("rest")
    created = calls.twice("/workspaces", admin_token, {"slug": slug, "name": "At rest"}, 201, f"workspace '{slug}' was created", "apiKey")
    manager = created["apiKey"]

    # More keys: a long-lived one, a grant derived from it, a scoped one by the operator.
    keys = f"/workspaces/{slug}/api-keys"
    ci = calls.twice(keys, manager, {"name": "ci"}, 201, "was created and is listed by GET", "key")
    calls.twice(keys, ci["key"], {"name": "board session", "expiresInSeconds": 600}, 201, "was created", "key")
    calls.twice(keys, admin_token, {"name": "agent", "role": "write"}, 201, "was created", "key")

    # A webhook, and its secret rotated.
    hooks = f"/workspaces/{slug}/webhooks"
    hook = calls.twice(hooks, manager, HOOK, 201, "was created", "secret")
    calls.twice(f"{hooks}/{hook['id']}/rotate-secret", manager, None, 200, "was rotated", "secret")

    # SSO secrets: chosen, then generated.
    chosen = "chosen-sso-secret-" + uuid.uuid4().hex
    r = api.patch(f"/workspaces/{slug}/settings", key=manager, json={"ssoSecret": chosen})
    assert r.status_code == 200 and r.json()["ssoSecret"] == chosen, r.text
    calls.secrets.append(chosen)
    r = api.patch(f"/workspaces/{slug}/settings", key=manager, json={"ssoSecret": "generate"})
    generated = r.json() if r.status_code == 200 else {}
    calls.secrets += [generated["ssoSecret"]] if generated.get("ssoSecret") else []

    # Some traffic that lands in other services' databases and the outbox.
    other = create_workspace(api, admin_token)
    calls.secrets.append(other.key)
    api.post(f"{other.path}/boards", key=other.key, json={"slug": "ideas", "name": "Ideas"})

    needles = {part for secret in calls.secrets for part in credential_parts(secret)}
    uri = load_settings(stack.env()).mongodb_uri
    leaks = sorted({(db, coll) for db, coll, text in every_document(uri) for needle in needles if needle in text})
    assert leaks == [], f"secrets stored in clear in {leaks}"
    # Nor published: the workspace's events (created, then two settings changes) carry no secret.
    published = workspace_events(stack, slug, 3)
    assert [n for n in needles for event in published if n in event] == []

    calls.check_retries()
    assert r.status_code == 200, r.text  # the generated SSO secret
    assert len(calls.secrets) == 9  # every secret above was answered, once
    names = [k["name"] for k in api.get(keys, key=manager).json()["items"]]
    assert sorted(names) == ["Default manager key", "agent", "board session", "ci"]  # no second resource
    assert len(api.get(hooks, key=manager).json()["items"]) == 1
    settings = api.get(f"/workspaces/{slug}/settings", key=manager).json()
    assert settings["ssoSecret"] == generated["ssoSecret"] and settings["ssoRequireAud"] is True
