"""The webhooks service's rules and its repository's claims, in process against the real local
database: no gateway, no Kafka, no dispatcher. Callers are managers of their workspace (whose
API key proves the workspace exists, so the workspaces service is never asked).

The configuration is the test process's own (the stack's relaxed settings are given to its
processes only): https is required and private addresses are refused, so registered URLs
are https to a public address literal, which needs no DNS and is never called.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from bson import ObjectId

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.ids import now
from webhooks import contract
from webhooks.service import WebhookService
from webhooks.signing import active_keys

from .helpers import URL, manager

ANONYMOUS = auth.Caller(kind=auth.ANONYMOUS, user_id="anon:someone")


@pytest.fixture
def service(context) -> WebhookService:
    return context.service


def create(service, slug, **body):
    return service.create(manager(slug), slug, {"url": URL, **body})


def disabled_events(context, endpoint_id: str) -> list[dict]:
    return [
        doc["event"] for doc in context.store.db["outbox"].find({"event.type": contract.WEBHOOK_DISABLED})
        if doc["event"]["data"]["id"] == endpoint_id
    ]


def test_only_managers_of_the_workspace_get_past_the_check_before_the_body_is_read(service, slug):
    hook = create(service, slug)
    ping = service.ping(manager(slug), slug, hook["id"])
    invalid = {"not": "even valid"}
    for caller, error in (
        (ANONYMOUS, Unauthorized),
        (auth.Caller(kind=auth.USER, workspace=slug, user_id="sso:u1"), Forbidden),
        (manager("another-workspace"), Forbidden),
    ):
        with pytest.raises(error):
            service.create(caller, slug, invalid)
        with pytest.raises(error):
            service.update(caller, slug, hook["id"], invalid)
        with pytest.raises(error):
            service.list(caller, slug)
        with pytest.raises(error):
            service.get(caller, slug, hook["id"])
        with pytest.raises(error):
            service.rotate(caller, slug, hook["id"])
        with pytest.raises(error):
            service.ping(caller, slug, hook["id"])
        with pytest.raises(error):
            service.deliveries(caller, slug, hook["id"], None, 20, 0)
        with pytest.raises(error):
            service.delivery(caller, slug, hook["id"], ping["id"])
        with pytest.raises(error):
            service.resend(caller, slug, hook["id"], ping["id"])
        with pytest.raises(error):
            service.delete(caller, slug, hook["id"])
    with pytest.raises(BadRequest, match="field 'url' is required"):
        service.create(manager(slug), slug, invalid)
    assert service.get(manager(slug), slug, hook["id"])["id"] == hook["id"]  # nobody deleted it


def test_unknown_event_types_are_refused_with_the_catalog_listed(service, context, slug):
    with pytest.raises(BadRequest) as refused:
        create(service, slug, events=["post.created", "post.exploded"])
    message = str(refused.value)
    assert "field 'events' has unknown event type(s): post.exploded;" in message
    known = message.split("known: ", 1)[1].split(", ")
    assert known == list(context.catalog) and {"webhook.disabled", "webhook.test", "workspace.created"} <= set(known)
    assert service.list(manager(slug), slug)["items"] == []
    hook = create(service, slug, events=["webhook.disabled", "webhook.test", "webhook.disabled"])
    assert hook["events"] == ["webhook.disabled", "webhook.test"]  # duplicates dropped, order kept
    with pytest.raises(BadRequest, match="unknown event type"):
        service.update(manager(slug), slug, hook["id"], {"events": ["nope"]})


@pytest.mark.parametrize(
    "url, words",
    [
        ("http://10.0.0.1/", "field 'url'"),  # plain http (off here), and a private address
        ("https://10.0.0.1/", "field 'url' resolves to 10.0.0.1, a private address"),
        ("https://169.254.169.254/latest/meta-data/", "a link-local address"),
        ("https://[::1]/", "a loopback address"),
        ("https://user:pw@93.184.215.14/", "field 'url' must not contain credentials"),
        ("ftp://93.184.215.14/", "field 'url' must be an absolute http(s) URL"),
    ],
)
def test_urls_the_guard_refuses_are_never_stored(service, slug, url, words):
    with pytest.raises(BadRequest) as refused:
        service.create(manager(slug), slug, {"url": url})
    assert words in str(refused.value)
    hook = create(service, slug)
    with pytest.raises(BadRequest):
        service.update(manager(slug), slug, hook["id"], {"url": url})
    assert [h["url"] for h in service.list(manager(slug), slug)["items"]] == [URL]


def test_the_secret_is_shown_on_creation_and_rotation_only(service, context, slug):
    created = create(service, slug)
    secret = created["secret"]
    assert secret.startswith(contract.SECRET_PREFIX)
    shown = [
        service.list(manager(slug), slug),
        service.get(manager(slug), slug, created["id"]),
        service.update(manager(slug), slug, created["id"], {"events": ["webhook.test"]}),
    ]
    rotated = service.rotate(manager(slug), slug, created["id"])
    assert rotated["secret"] not in (secret, None)
    shown.append(service.delete(manager(slug), slug, created["id"]))
    for shape in shown:
        assert "secret" not in repr(shape) and secret not in repr(shape) and rotated["secret"] not in repr(shape)


def test_a_rotated_out_secret_keeps_signing_for_the_window(service, context, slug):
    first = create(service, slug)
    second = service.rotate(manager(slug), slug, first["id"])
    stored = context.repo.find_endpoint(slug, ObjectId(first["id"]))
    at = now()
    assert active_keys(stored, at) == [second["secret"], first["secret"]]
    window = timedelta(seconds=context.config.rotation_window)
    assert active_keys(stored, at + window + timedelta(seconds=1)) == [second["secret"]]


def test_another_workspace_sees_nothing_and_malformed_ids_are_404(service, slug):
    hook = create(service, slug)
    other = f"{slug}-other"
    with pytest.raises(NotFound):
        service.get(manager(other), other, hook["id"])
    with pytest.raises(NotFound):
        service.update(manager(other), other, hook["id"], {"disabled": True})
    for bad in ("not-an-id", "0" * 24):
        with pytest.raises(NotFound):
            service.get(manager(slug), slug, bad)
        with pytest.raises(NotFound):
            service.delivery(manager(slug), slug, hook["id"], bad)
    assert service.get(manager(slug), slug, hook["id"])["disabled"] is False


def test_a_workspace_has_at_most_max_endpoints(context, slug):
    config = replace(context.config, max_endpoints=2)
    service = WebhookService(context.repo, context.service.workspaces, config, context.service.policy, context.catalog)
    create(service, slug)
    create(service, slug)
    with pytest.raises(Conflict, match="at most 2 webhook endpoints"):
        create(service, slug)


def test_disabling_publishes_once_and_blocks_pings_and_resends(service, context, slug):
    hook = create(service, slug)
    ping = service.ping(manager(slug), slug, hook["id"])
    assert ping["status"] == contract.PENDING and ping["payload"]["data"]["webhookId"] == hook["id"]

    changed = service.update(manager(slug), slug, hook["id"], {"disabled": True, "events": ["webhook.test"]})
    assert (changed["disabled"], changed["disabledReason"], changed["events"]) == (True, "manual", ["webhook.test"])
    assert service.update(manager(slug), slug, hook["id"], {"disabled": True})["disabled"] is True
    assert service.disable(ObjectId(hook["id"]), contract.DISABLED_GONE) is None  # already disabled
    [event] = disabled_events(context, hook["id"])
    assert event["workspace"] == slug and event["data"] == changed and "secret" not in event["data"]

    with pytest.raises(Conflict, match="disabled"):
        service.ping(manager(slug), slug, hook["id"])
    with pytest.raises(Conflict, match="disabled"):
        service.resend(manager(slug), slug, hook["id"], ping["id"])
    enabled = service.update(manager(slug), slug, hook["id"], {"disabled": False})
    assert (enabled["disabled"], enabled["disabledReason"]) == (False, None)


def test_the_senders_outcomes_start_the_failing_span_and_disable_after_it(service, context, slug):
    hook = create(service, slug)
    oid = ObjectId(hook["id"])
    start = now()
    service.attempts_ended(context.repo.endpoint(oid), gone=False, ok=False, at=start)
    assert context.repo.endpoint(oid)["failingSince"] == start
    service.attempts_ended(context.repo.endpoint(oid), gone=False, ok=True, at=now())
    assert context.repo.endpoint(oid)["failingSince"] is None

    service.attempts_ended(context.repo.endpoint(oid), gone=False, ok=False, at=start)
    almost = start + timedelta(seconds=context.config.disable_after - 1)
    service.attempts_ended(context.repo.endpoint(oid), gone=False, ok=False, at=almost)
    assert context.repo.endpoint(oid)["disabled"] is False
    service.attempts_ended(context.repo.endpoint(oid), gone=False, ok=False, at=almost + timedelta(seconds=1))
    assert service.get(manager(slug), slug, hook["id"])["disabledReason"] == contract.DISABLED_FAILING

    gone = create(service, slug)
    service.attempts_ended(context.repo.endpoint(ObjectId(gone["id"])), gone=True, ok=False, at=now())
    assert service.get(manager(slug), slug, gone["id"])["disabledReason"] == contract.DISABLED_GONE
    assert len(disabled_events(context, gone["id"])) == 1


def test_resend_only_what_is_finished_and_delete_takes_the_log(service, context, slug):
    hook = create(service, slug)
    ping = service.ping(manager(slug), slug, hook["id"])
    with pytest.raises(Conflict, match="still pending"):
        service.resend(manager(slug), slug, hook["id"], ping["id"])
    oid = ObjectId(ping["id"])
    token = f"test-{uuid.uuid4().hex}"
    context.repo.claim_due(1000, token, 30)
    attempt = {"at": now(), "statusCode": 500, "error": None, "durationMs": 3}
    context.repo.apply([context.repo.outcome(oid, token, {"status": contract.FAILED, "nextAttemptAt": None, "lastAttemptAt": now()}, attempt)])

    listed = service.deliveries(manager(slug), slug, hook["id"], contract.FAILED, 20, 0)["items"]
    assert [d["id"] for d in listed] == [ping["id"]] and "payload" not in listed[0]
    again = service.resend(manager(slug), slug, hook["id"], ping["id"])
    assert (again["status"], again["attemptCount"], again["messageId"]) == (contract.PENDING, 1, ping["messageId"])
    assert context.repo.find_delivery(ObjectId(hook["id"]), oid)["scheduleStart"] == 1

    service.delete(manager(slug), slug, hook["id"])
    assert context.repo.find_delivery(ObjectId(hook["id"]), oid) is None
    with pytest.raises(NotFound):
        service.delivery(manager(slug), slug, hook["id"], ping["id"])


def test_a_claim_is_won_once_and_only_its_holder_writes_the_outcome(service, context, slug):
    repo = context.repo
    hook = create(service, slug)
    ping = service.ping(manager(slug), slug, hook["id"])
    oid = ObjectId(ping["id"])
    first, second = f"a-{uuid.uuid4().hex}", f"b-{uuid.uuid4().hex}"
    assert oid in {d["_id"] for d in repo.claim_due(1000, first, 30)}
    assert oid not in {d["_id"] for d in repo.claim_due(1000, second, 30)}
    assert repo.renew(oid, first, 30) and not repo.renew(oid, second, 30)

    attempt = {"at": now(), "statusCode": 200, "error": None, "durationMs": 1}
    succeeded = {"status": contract.SUCCEEDED, "nextAttemptAt": None, "lastAttemptAt": now()}
    repo.apply([repo.outcome(oid, second, succeeded, attempt)])  # not the holder: nothing changes
    assert repo.find_delivery(ObjectId(hook["id"]), oid)["status"] == contract.PENDING

    repo.release([oid], first)  # handed back: due now, for anyone
    assert oid in {d["_id"] for d in repo.claim_due(1000, second, 0)}  # a lease that runs out at once
    assert oid in {d["_id"] for d in repo.claim_due(1000, first, 30)}  # so another dispatcher takes it over
    repo.apply([repo.outcome(oid, second, succeeded, attempt)])  # the lease moved on: ignored
    assert repo.find_delivery(ObjectId(hook["id"]), oid)["attemptCount"] == 0
    repo.apply([repo.outcome(oid, first, succeeded, attempt)])
    done = service.delivery(manager(slug), slug, hook["id"], ping["id"])
    assert (done["status"], done["attemptCount"], [a["statusCode"] for a in done["attempts"]]) == ("succeeded", 1, [200])


def test_concurrent_claimers_never_both_win_a_delivery(service, context, slug):
    hook = create(service, slug)
    pings = {ObjectId(service.ping(manager(slug), slug, hook["id"])["id"]) for _ in range(30)}
    won: dict[str, list] = {}
    start = threading.Barrier(4)

    def claimer(token: str) -> None:
        start.wait()
        mine = won.setdefault(token, [])
        for _ in range(10):
            mine += [d["_id"] for d in context.repo.claim_due(7, token, 60)]

    threads = [threading.Thread(target=claimer, args=(f"t{i}-{uuid.uuid4().hex}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claims = [oid for ids in won.values() for oid in ids]
    assert len(claims) == len(set(claims)), "a delivery was won by two claimers"
    assert pings <= set(claims)
    for oid in pings:
        holders = [token for token, ids in won.items() if oid in ids]
        assert context.repo.find_delivery(ObjectId(hook["id"]), oid)["claim"] == holders[0]


def test_recording_builds_deliveries_from_the_model_and_ignores_replays(service, context, slug):
    hook = create(service, slug)
    endpoint = context.repo.endpoint(ObjectId(hook["id"]))
    body = {"type": "workspace.updated", "timestamp": "2026-01-01T00:00:00.000Z", "data": {"slug": slug}}
    event_id = uuid.uuid4().hex
    due = now()
    doc = context.repo.new_delivery(endpoint, event_id, body, due, "me")
    assert doc["messageId"] == f"msg_{event_id}" and doc["attempts"] == [] and doc["attemptCount"] == 0
    assert (doc["status"], doc["nextAttemptAt"], doc["claim"], doc["lastAttemptAt"]) == (contract.PENDING, due, "me", None)
    assert context.repo.insert_deliveries([doc]) == [doc]
    replay = context.repo.new_delivery(endpoint, event_id, body, due, "me")
    fresh = context.repo.new_delivery(endpoint, uuid.uuid4().hex, body, due, "me")
    assert context.repo.insert_deliveries([replay, fresh]) == [fresh]
