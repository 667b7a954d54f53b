"""Events: the outbox keeps writes independent of Kafka; consumers are idempotent."""

import json
import uuid

import pytest
from bson import ObjectId
from pymongo import MongoClient

from common.config import Settings, load_settings
from common.consumer import ConsumerRunner
from devstack import LocalStack
from common.events import EventOffContract, Outbox
from common.ids import now
from common.kafka import make_consumer
from testkit import Api, create_workspace, wait_for


PERMISSION_MAX_AGE = 5.0  # POSTS_PERMISSION_MAX_AGE's default


def read_events(settings: Settings, topic: str, want, timeout: float = 30.0) -> list[dict]:
    """Consume ``topic`` from the beginning (a fresh group) until ``want(events)`` holds."""
    consumer = make_consumer(settings, f"test-{uuid.uuid4().hex}", [topic])
    events: list[dict] = []
    try:
        def enough():
            for records in consumer.poll(timeout_ms=500).values():
                events.extend(json.loads(r.value) for r in records)
            return want(events)

        wait_for(enough, timeout=timeout, what=f"events on {topic}")
    finally:
        consumer.close()
    return events


def test_workspace_changes_are_published(stack, api, workspace):
    workspace.settings(anonVote=True)
    settings = Settings(kafka_bootstrap_servers=stack.kafka_bootstrap)

    def updated(events):
        return [e for e in events if e["workspace"] == workspace.slug and e["type"] == "workspace.updated"]

    event = updated(read_events(settings, "feedback.workspaces", updated))[-1]
    assert set(event) == {"id", "type", "timestamp", "workspace", "data"}
    assert event["data"]["anonVote"] is True
    assert "ssoSecret" not in json.dumps(event)


@pytest.mark.reliability
def test_writes_succeed_while_kafka_is_down_and_events_follow(tmp_path):
    """Its own platform, because it stops the broker: settings, posts, votes and comments are
    written while Kafka is down; every event arrives once it is back, in order."""
    with LocalStack(log_dir=tmp_path) as platform:
        api = Api(platform.url)
        ws = create_workspace(api, platform.admin_token)
        ws.board("features", "Features")
        voters = [ws.user_token(f"voter-{i}") for i in range(5)]
        platform.stop_kafka()

        colours = ["#000001", "#000002", "#000003", "#000004", "#000005"]
        for colour in colours:
            r = api.patch(f"{ws.path}/settings", key=ws.key, json={"primaryColor": colour, "anonSubmit": colour == colours[-1]})
            assert r.status_code == 200, r.text
        r = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "Offline post", "content": "x"})
        assert r.status_code == 201, r.text
        post_id = r.json()["id"]
        for token in voters:
            assert api.post(f"{ws.path}/posts/{post_id}/vote", user=token).status_code in (200, 201)
        assert api.post(f"{ws.path}/posts/{post_id}/comments", user=voters[0], json={"content": "Still works"}).status_code == 201

        # Anonymous posting, turned on above and off now while no event can reach the posts
        # service's read model: the change holds within the documented bound all the same.
        def anonymous_post():
            headers = {"X-Feedback-Anonymous-Id": uuid.uuid4().hex}
            return api.post(f"{ws.path}/posts", headers=headers, json={"boardSlug": "features", "title": "Anon", "content": "x"})

        assert anonymous_post().status_code == 201
        assert api.patch(f"{ws.path}/settings", key=ws.key, json={"anonSubmit": False}).status_code == 200
        wait_for(lambda: anonymous_post().status_code == 401, timeout=PERMISSION_MAX_AGE + 2, what="anonSubmit off to hold")
        pending = sum(MongoClient(platform.mongodb_uri)[db]["outbox"].count_documents({"key": ws.slug})
                      for db in ("feedback_workspaces", "feedback_posts"))
        assert pending >= len(colours) + 1 + len(voters) + 1, "events wait in the outboxes"

        platform.start_kafka()  # same port, empty broker
        settings = Settings(kafka_bootstrap_servers=platform.kafka_bootstrap)

        def mine(events, kind):
            return [e for e in events if e["workspace"] == ws.slug and e["type"] == kind]

        events = read_events(settings, "feedback.workspaces", lambda ev: len(mine(ev, "workspace.updated")) >= len(colours) + 1, timeout=60)
        unique = {e["id"]: e for e in mine(events, "workspace.updated")}  # at-least-once: drop re-sends
        versions = [e["data"]["version"] for e in unique.values()]
        # Earlier updates (board, SSO secret) may or may not have left before the broker stopped;
        # what arrives must be in order with no gap, and include the five changes made while down.
        assert versions == list(range(versions[0], versions[0] + len(versions))), f"in order, none lost: {versions}"
        assert len(versions) >= len(colours)
        assert mine(events, "workspace.updated")[-1]["data"]["anonSubmit"] is False

        def all_posts_events(ev):
            return mine(ev, "post.created") and len(mine(ev, "vote.created")) >= len(voters) and mine(ev, "comment.created")

        events = read_events(settings, "feedback.posts", all_posts_events, timeout=60)
        assert len({e["id"] for e in mine(events, "vote.created")}) == len(voters)
        for db in ("feedback_workspaces", "feedback_posts"):
            outbox = MongoClient(platform.mongodb_uri)[db]["outbox"]
            wait_for(lambda: outbox.count_documents({"key": ws.slug}) == 0, what=f"the {db} outbox to drain")


def test_consumer_handles_each_event_once(stack):
    settings = Settings(mongodb_uri=stack.mongodb_uri, kafka_bootstrap_servers=stack.kafka_bootstrap)
    db = MongoClient(stack.mongodb_uri)["feedback_test_consumer"]
    seen = []
    runner = ConsumerRunner(settings, db, f"group-{uuid.uuid4().hex}", {"t": lambda e: seen.append(e["id"])})
    event = json.dumps({"id": uuid.uuid4().hex, "type": "x", "timestamp": "", "workspace": "w", "data": {}}).encode()
    runner.handle("t", event)
    runner.handle("t", event)  # redelivered after a crash before the commit
    assert len(seen) == 1


def test_a_failing_handler_parks_the_message_and_moves_on(stack):
    settings = Settings(mongodb_uri=stack.mongodb_uri, kafka_bootstrap_servers=stack.kafka_bootstrap)
    db = MongoClient(stack.mongodb_uri)["feedback_test_consumer"]
    calls = []

    def broken(event):
        calls.append(event["id"])
        raise ValueError("bug")

    topic = f"test-dlq-{uuid.uuid4().hex[:8]}"
    runner = ConsumerRunner(settings, db, f"group-{uuid.uuid4().hex}", {topic: broken})
    runner.handle(topic, json.dumps({"id": "e1", "type": "x", "workspace": "w", "data": {}}).encode())
    runner.handle(topic, b"not json")
    assert len(calls) == 3, "retried, then parked"
    parked = read_events(settings, f"{topic}.dlq", lambda events: len(events) >= 2)
    assert {p["reason"] for p in parked} >= {"undecodable message"}



def test_published_events_match_their_declared_schemas(stack, api, workspace):
    """Every event type of posts and workspaces, produced through the API, validates against
    the JSON schema its service declares (which the webhook docs and OpenAPI are derived from)."""
    import jsonschema

    from common.plugins import load_services

    ws, key = workspace, workspace.key
    ws.board("features", "Features")
    made = []
    for title in ("Dark mode", "Night theme"):
        r = api.post(f"{ws.path}/posts", key=key, json={"boardSlug": "features", "title": title, "content": "x"})
        assert r.status_code == 201, r.text
        made.append(r.json()["id"])
    a, b = made
    user = ws.user_token("schema-voter")
    assert api.post(f"{ws.path}/posts/{a}/vote", user=user).status_code == 201
    assert api.delete(f"{ws.path}/posts/{a}/vote", user=user).status_code == 200
    assert api.post(f"{ws.path}/posts/{a}/comments", key=key, json={"content": "On it", "isPrivate": True}).status_code == 201
    assert api.patch(f"{ws.path}/posts/{a}", key=key, json={"title": "Dark mode!", "statusSlug": "planned"}).status_code == 200
    assert api.post(f"{ws.path}/posts/{a}/merge", key=key, json={"intoPostId": b}).status_code == 200
    assert api.post(f"{ws.path}/posts/{a}/unmerge", key=key).status_code == 200
    said = api.post(f"{ws.path}/posts/{a}/comments", user=user, json={"content": "Me too"})
    assert said.status_code == 201, said.text
    comment = f"{ws.path}/posts/{a}/comments/{said.json()['id']}"
    assert api.patch(comment, user=user, json={"content": "Me too, on iOS"}).status_code == 200
    assert api.delete(comment, key=key).status_code == 204
    gone = api.post(f"{ws.path}/posts", key=key, json={"boardSlug": "features", "title": "A mistake", "content": "x"})
    assert api.delete(f"{ws.path}/posts/{gone.json()['id']}", key=key).status_code == 204
    r = api.put(f"{ws.path}/triage", key=key, json={"tags": [{"slug": "ux", "name": "UX", "color": "#2563eb"}], "fields": [],
                                                       "scoreFormula": "votes * 2"})
    assert r.status_code == 200, r.text
    r = api.post(f"{ws.path}/changelogs", key=key, json={"title": "Dark", "slug": "dark", "content": "x", "publish": True, "postIds": [b]})
    assert r.status_code == 201, r.text
    made = api.post(f"{ws.path}/api-keys", key=key, json={"name": "CI"})
    assert made.status_code == 201, made.text
    assert api.delete(f"{ws.path}/api-keys/{made.json()['id']}", key=key).status_code == 200

    services = load_services()
    settings = Settings(kafka_bootstrap_servers=stack.kafka_bootstrap)
    for name in ("posts", "workspaces"):
        spec = services[name]

        def all_types(events, spec=spec):
            return set(spec.events) <= {e["type"] for e in events if e["workspace"] == ws.slug}

        for event in read_events(settings, spec.topic, all_types):
            if event["workspace"] == ws.slug:
                jsonschema.validate(event["data"], spec.events[event["type"]])


def test_the_event_docs_are_generated_from_the_declarations():
    from pathlib import Path

    from common.eventdocs import catalog_markdown
    from common.plugins import load_services

    doc = Path(__file__).resolve().parents[1] / "docs" / "events.md"
    assert doc.read_text() == catalog_markdown(load_services()), "regenerate: feedback events > docs/events.md"


def test_every_event_written_in_the_suite_is_checked_against_its_contract(service_context):
    """Each event is defined once, by its schema in ``contract.EVENTS``; the test kit turns on
    the check (FEEDBACK_CHECK_EVENTS) for the in-process services and every platform the suite
    starts, so an emission site that drifts from its schema fails the test that reaches it."""
    assert load_settings().check_events, "the platforms tests start inherit the check"
    repo = service_context("posts").service.repo
    slug = f"unit-{uuid.uuid4().hex[:10]}"
    vote = {"postId": "0" * 24, "userId": "u1", "voteCount": 1}
    repo.event(slug, "vote.created", vote)  # on its schema: accepted

    with pytest.raises(EventOffContract, match="voteCount"):
        repo.event(slug, "vote.created", {**vote, "voteCount": "1"})
    with pytest.raises(EventOffContract, match="weight"):
        repo.event(slug, "vote.created", {**vote, "weight": 2})
    with pytest.raises(EventOffContract, match="userId"):
        repo.event(slug, "vote.created", {"postId": vote["postId"], "voteCount": 1})
    with pytest.raises(EventOffContract, match="not declared"):
        repo.event(slug, "vote.cast", vote)
    comment = {"id": "0" * 24, "postId": "0" * 24, "parentId": None, "content": "x", "isTeamMember": False,
               "authorName": None, "author": None, "isPrivate": False, "createdAt": "2024-05-01T12:00:00Z"}
    on_post = {"post": {"id": "0" * 24, "title": "t"}, "actor": None}
    repo.event(slug, "comment.created", {"comment": comment, **on_post})
    with pytest.raises(EventOffContract, match="createdAt"):  # formats count: a date-time must be one
        repo.event(slug, "comment.created", {"comment": {**comment, "createdAt": "yesterday"}, **on_post})

    # Refused inside its unit of work, the change it reports is rolled back with it.
    def vote_then_report_off_contract(tx):
        tx.add(tx.insert_vote(workspace=slug, postId=ObjectId(), userId=slug, countsFor="x", createdAt=now()))
        tx.flush()  # the vote is written in the transaction before the event is refused
        tx.add(tx.event(slug, "vote.created", {}))

    with pytest.raises(EventOffContract):
        repo.unit_of_work(vote_then_report_off_contract)
    assert repo.votes.count_documents({"userId": slug}) == 0

    # Outside the tests (the setting off) events are written unchecked: the check costs nothing.
    assert Outbox(repo.store.db, "feedback.posts").document("vote.cast", slug, {})["event"]["type"] == "vote.cast"
