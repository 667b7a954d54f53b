"""A person's data (docs/privacy.md), across the services: what they download, and that after
they erase themselves nothing of the platform keeps their address (every database, every
event the broker retains), their votes no longer count and what they wrote stays as
"Deleted user"."""

from __future__ import annotations

import json
import uuid
from urllib.parse import parse_qs, urlsplit

from bson import json_util
from pymongo import MongoClient

from kafka import KafkaConsumer, TopicPartition
from testkit import assert_error, wait_for
from testkit.mail import link_in, wait_for_mail


def address(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}@example.com"


def sign_in_by_mail(ws, maildir, email: str) -> str:
    """A session proven by a mailed link (the platform's own proof of the address): its token."""
    r = ws.api.post(f"{ws.path}/sign-in/email", json={"email": email})
    assert r.status_code == 202, r.text
    link = link_in(wait_for_mail(maildir, to=email), "http")
    r = ws.api.post(f"{ws.path}/sign-in/email/redeem", json={"token": parse_qs(urlsplit(link).query)["token"][0]})
    assert r.status_code == 201, r.text
    return r.json()["token"]


def where_kept(mongodb_uri: str, text: str) -> list[str]:
    """Every database, collection and document id of the server holding ``text`` anywhere."""
    client, found = MongoClient(mongodb_uri), []
    needle = text.lower()
    for name in client.list_database_names():
        if name in ("admin", "config", "local"):
            continue
        db = client[name]
        for collection in db.list_collection_names():
            for doc in db[collection].find():
                if needle in json_util.dumps(doc).lower():
                    found.append(f"{name}.{collection} {doc.get('_id')}")
    return found


def retained_events_with(bootstrap: str, *texts: str) -> dict[str, list[str]]:
    """For each of ``texts``, the events the broker's topics still hold that carry it."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)  # no group: read it all
    partitions = [TopicPartition(topic, p) for topic in sorted(consumer.topics()) if topic.startswith("feedback.")
                  for p in consumer.partitions_for_topic(topic) or ()]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    found: dict[str, list[str]] = {text: [] for text in texts}
    quiet = 0
    try:
        while quiet < 2:
            batch = consumer.poll(timeout_ms=1000)
            quiet = 0 if batch else quiet + 1
            for records in batch.values():
                for r in records:
                    for text in texts:
                        if text.lower().encode() in (r.value or b"").lower():
                            found[text].append(f"{r.topic}@{r.offset}")
    finally:
        consumer.close()
    return found


def test_a_person_downloads_their_data_then_erases_themself_and_nothing_keeps_their_address(api, workspace, stack, maildir):
    ws, email = workspace, address("erase-me")
    board = ws.board()
    session = sign_in_by_mail(ws, maildir, email)
    me = api.get("/me", key=session).json()
    team_post = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": board["slug"], "title": "Dark mode", "content": "x"}).json()
    mine = api.post(f"{ws.path}/posts", key=session, json={"boardSlug": board["slug"], "title": "Keyboard shortcuts", "content": "Please"})
    assert mine.status_code == 201, mine.text
    mine = mine.json()
    assert api.post(f"{ws.path}/posts/{team_post['id']}/vote", key=session).json()["voteCount"] == 1
    r = api.post(f"{ws.path}/posts/{team_post['id']}/comments", key=session, json={"content": "Yes, at night too"})
    assert r.status_code == 201, r.text
    assert api.put(f"{ws.path}/companies/acme", key=ws.key, json={"name": "Acme", "monthlySpend": 500}).status_code in (200, 201)
    assert api.post(f"{ws.path}/companies/acme/members", key=ws.key, json={"email": email}).status_code in (200, 201)
    # Their address on the changelog's list (a confirmation mail to the address, not the person).
    assert api.post(f"{ws.path}/changelog/subscriptions", json={"email": email}).status_code == 202
    # A mail that names them, kept in the mail queue: their post's status changes.
    statuses = api.get(f"{ws.path}/statuses", key=ws.key).json()["items"]
    other = next(s["slug"] for s in statuses if s["slug"] != mine["status"]["slug"])
    assert api.patch(f"{ws.path}/posts/{mine['id']}", key=ws.key, json={"statusSlug": other}).status_code == 200

    data = wait_for(lambda: (d := api.get("/me/data", key=session).json()) and d["companies"] and d["follows"] and d, timeout=60,
                    what="their data to name their companies and follows")
    assert data["person"]["email"] == email and data["userId"] == me["id"]
    assert [p["title"] for p in data["posts"]] == ["Keyboard shortcuts"]
    assert [c["content"] for c in data["comments"]] == ["Yes, at night too"]
    assert sorted(v["postId"] for v in data["votes"]) == sorted([team_post["id"], mine["id"]])  # with their own post's
    assert data["companies"][0]["companies"] == ["acme"] and data["sessions"][0]["method"] == "email"
    assert "token" not in json.dumps(data["sessions"])  # no secret in a download
    wait_for(lambda: where_kept(stack.mongodb_uri, email), interval=1, what="their address in the mail queue")

    # A kept export names them (their address in people.jsonl).
    export = api.post(f"{ws.path}/exports", key=ws.key).json()
    wait_for(lambda: api.get(f"{ws.path}/exports/{export['id']}", key=ws.key).json()["status"] == "succeeded",
             timeout=60, what="the export")
    assert api.get(f"{ws.path}/exports/{export['id']}/download", key=ws.key).status_code == 200

    r = api.delete("/me/data", key=session)
    assert r.status_code == 202, r.text
    assert r.json()["workspace"] is None  # a mailed link proved the address: everywhere
    assert_error(api.get("/me", key=session), 401)

    left = wait_for(lambda: not where_kept(stack.mongodb_uri, email), timeout=60, interval=1, what="every trace of the address to go")
    assert left, where_kept(stack.mongodb_uri, email)
    post = wait_for(lambda: (p := api.get(f"{ws.path}/posts/{team_post['id']}", key=ws.key).json())["voteCount"] == 0 and p,
                    timeout=60, what="their vote to be withdrawn")
    assert post["voteCount"] == 0
    theirs = wait_for(lambda: (p := api.get(f"{ws.path}/posts/{mine['id']}", key=ws.key).json())["author"]["name"] == "Deleted user" and p,
                      timeout=60, what="their post to be anonymised")
    assert theirs["title"] == "Keyboard shortcuts"  # what they wrote stays
    comments = api.get(f"{ws.path}/posts/{team_post['id']}/comments", key=ws.key).json()["items"]
    assert [(c["content"], c["author"]["name"]) for c in comments] == [("Yes, at night too", "Deleted user")]
    wait_for(lambda: me["id"] not in [m["userId"] for m in api.get(f"{ws.path}/companies/acme/members", key=ws.key).json()["items"]],
             timeout=60, what="their company membership to go")
    # The export's file is gone (a zip cannot be edited: the team makes a new one).
    # (A 4xx response is falsy: the wait returns its body.)
    gone = wait_for(lambda: (r := api.get(f"{ws.path}/exports/{export['id']}/download", key=ws.key)).status_code == 409 and r.json(),
                    timeout=60, interval=0.5, what="the export naming them to lose its file")
    assert "erased" in gone["error"]
    audit = api.get(f"{ws.path}/audit-log", key=ws.key, params={"type": "person.erased"}).json()["items"]
    assert audit and audit[0]["data"] == {"userId": me["id"]}
    # An end user's address never travels in an event, so the broker retains none of it (while
    # it does retain this workspace's events: the scan reads them).
    retained = retained_events_with(stack.kafka_bootstrap, email, ws.slug)
    assert retained[ws.slug] and retained[email] == []


def test_an_owner_erases_an_end_user_of_their_workspace_and_only_there(api, workspace, other_workspace):
    ws = workspace
    board, elsewhere_board = ws.board(), other_workspace.board()
    user = ws.user_token("sso-erase")  # an SSO user without an address: sso:sso-erase
    there = other_workspace.user_token("sso-erase")
    post = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": board["slug"], "title": "Export", "content": "x"}).json()
    post_there = api.post(f"{other_workspace.path}/posts", key=other_workspace.key,
                          json={"boardSlug": elsewhere_board["slug"], "title": "Export", "content": "x"}).json()
    assert api.post(f"{ws.path}/posts/{post['id']}/vote", user=user).json()["voteCount"] == 1
    assert api.post(f"{other_workspace.path}/posts/{post_there['id']}/vote", user=there).json()["voteCount"] == 1

    assert_error(api.delete(f"{ws.path}/users/sso:sso-erase/data", user=user), 403)  # not an owner
    r = api.get(f"{ws.path}/users/sso:sso-erase/data", key=ws.key)
    assert r.status_code == 200 and [v["postId"] for v in r.json()["votes"]] == [post["id"]], r.text
    r = api.delete(f"{ws.path}/users/sso:sso-erase/data", key=ws.key)
    assert r.status_code == 202 and r.json()["workspace"] == ws.slug, r.text
    wait_for(lambda: api.get(f"{ws.path}/posts/{post['id']}", key=ws.key).json()["voteCount"] == 0, timeout=60, what="the vote here to go")
    # Another workspace's user of the same id is another workspace's business.
    assert api.get(f"{other_workspace.path}/posts/{post_there['id']}", key=other_workspace.key).json()["voteCount"] == 1


def test_a_team_member_is_removed_from_the_team_before_an_owner_erases_them(api, workspace, maildir):
    email = address("member")
    invited = api.post(f"{workspace.path}/members", key=workspace.admin_token, json={"email": email, "role": "manager"})
    assert invited.status_code == 201, invited.text
    link = invited.json()["link"]
    joined = api.post(f"{workspace.path}/invitations/accept", json={"token": parse_qs(urlsplit(link).query)["token"][0]})
    assert joined.status_code == 201, joined.text
    user_id = joined.json()["user"]["id"]
    assert_error(api.delete(f"{workspace.path}/users/{user_id}/data", key=workspace.key), 409)
    assert_error(api.delete(f"{workspace.path}/users/person:{'0' * 24}/data", key=workspace.key), 404)


def test_a_workspace_that_deletes_what_erased_people_wrote_deletes_it(api, workspace):
    ws = workspace
    board = ws.board()
    assert ws.settings(erasedUserContent="delete")["erasedUserContent"] == "delete"
    user = ws.user_token("leaving")
    team_post = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": board["slug"], "title": "Kept", "content": "x"}).json()
    theirs = api.post(f"{ws.path}/posts", user=user, json={"boardSlug": board["slug"], "title": "Mine", "content": "secret plans"}).json()
    assert api.post(f"{ws.path}/posts/{team_post['id']}/comments", user=user, json={"content": "me too"}).status_code == 201
    assert_error(api.patch(f"{ws.path}/settings", key=ws.key, json={"erasedUserContent": "shred"}), 400)

    assert api.delete(f"{ws.path}/users/sso:leaving/data", key=ws.key).status_code == 202
    wait_for(lambda: api.get(f"{ws.path}/posts/{theirs['id']}", key=ws.key).status_code == 404, timeout=60, what="their post to be deleted")
    kept = wait_for(lambda: (p := api.get(f"{ws.path}/posts/{team_post['id']}", key=ws.key).json())["commentCount"] == 0 and p,
                    timeout=60, what="their comment to be deleted")
    assert kept["title"] == "Kept"
