"""A workspace's export through the running platform: seeded through the API, exported by the
worker, downloaded, and read back file by file; who may; and that no secret is in the zip."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import pytest

from testkit import assert_error, create_workspace, wait_for

FILES = {"manifest.json", "settings.json", "posts.csv", *(f"{kind}.jsonl" for kind in (
    "boards", "statuses", "tags", "fields", "changelogs", "companies", "posts", "votes", "comments", "people"))}


def ok(r, status=200):
    assert r.status_code == status, r.text
    return r.json() if r.content and r.headers.get("Content-Type", "").startswith("application/json") else r


@pytest.fixture(scope="module")
def seeded(api, admin_token):
    """A workspace with two boards, tagged posts with an ETA, votes by end users and on someone's
    behalf, a thread with a private comment, a changelog entry, a company with a member, an SSO
    secret and a webhook (whose secrets must stay out of the export)."""
    ws = create_workspace(api, admin_token, name="Exported")
    features, bugs = ws.board("features", "Feature requests"), ws.board("bugs", "Bugs")
    ok(api.put(f"{ws.path}/triage", key=ws.key, json={
        "tags": [{"slug": "ux", "name": "UX", "color": "#336699"}, {"slug": "api", "name": "API", "color": "#993366"}],
        "fields": [{"key": "segment", "name": "Segment", "type": "select", "options": ["smb", "enterprise"]}]}))
    posts = []
    for board, title in ((features, "Dark mode"), (features, "CSV import, please"), (bugs, 'Crash on "save"')):
        posts.append(ok(api.post(f"{ws.path}/posts", key=ws.key, json={"boardId": board["id"], "title": title,
                                                                        "content": f"About {title}\nsecond line"}), 201))
    ok(api.patch(f"{ws.path}/posts/{posts[0]['id']}", key=ws.key, json={"tags": ["ux", "api"], "eta": "2027-03"}))
    for user in ("alice", "bob"):
        r = api.post(f"{ws.path}/posts/{posts[0]['id']}/vote", user=ws.user_token(user))
        assert r.status_code in (200, 201), r.text
    ok(api.post(f"{ws.path}/posts/{posts[1]['id']}/votes", key=ws.key, json={"email": "carol@customer.test"}), 201)
    user_post = ok(api.post(f"{ws.path}/posts", user=ws.user_token("alice"), json={"boardId": bugs["id"], "title": "Slow search",
                                                                                      "content": "It takes ages"}), 201)
    posts.append(user_post)
    top = ok(api.post(f"{ws.path}/posts/{posts[0]['id']}/comments", key=ws.key, json={"content": "We are on it"}), 201)
    ok(api.post(f"{ws.path}/posts/{posts[0]['id']}/comments", user=ws.user_token("bob"),
                json={"content": "Thanks!", "parentId": top["id"]}), 201)
    ok(api.post(f"{ws.path}/posts/{posts[0]['id']}/comments", key=ws.key, json={"content": "Needs design first", "isPrivate": True}), 201)
    ok(api.post(f"{ws.path}/changelogs", key=ws.key, json={"title": "Dark mode is here", "slug": "dark-mode", "content": "Enjoy.",
                                                              "postIds": [posts[0]["id"]], "publish": True}), 201)
    r = api.put(f"{ws.path}/companies/globex", key=ws.key, json={"name": "Globex", "monthlySpend": 1250.5})
    assert r.status_code in (200, 201), r.text
    ok(api.post(f"{ws.path}/companies/globex/members", key=ws.key, json={"email": "carol@customer.test"}))
    hook = ok(api.post(f"{ws.path}/webhooks", key=ws.key, json={"url": "http://127.0.0.1:9/hook"}), 201)
    return {"ws": ws, "posts": posts, "boards": (features, bugs), "secrets": [ws.sso_secret, hook["secret"], ws.key]}


def finished(api, ws, export_id):
    def done():
        body = ok(api.get(f"{ws.path}/exports/{export_id}", key=ws.key))
        return body if body["status"] in ("succeeded", "failed") else None
    return wait_for(done, timeout=30, what=f"export {export_id}")


@pytest.fixture(scope="module")
def exported(api, seeded):
    """Two exports started back to back (one may still run when the other starts), both waited
    for; the first one's zip."""
    ws = seeded["ws"]
    first = ok(api.post(f"{ws.path}/exports", key=ws.key), 202)
    second = ok(api.post(f"{ws.path}/exports", key=ws.key), 202)
    assert first["status"] == "queued" and first["progress"] == {"done": 0, "total": 12}
    ends = [finished(api, ws, e["id"]) for e in (first, second)]
    assert [e["status"] for e in ends] == ["succeeded", "succeeded"], ends
    r = api.get(f"{ws.path}/exports/{first['id']}/download", key=ws.key)
    assert r.status_code == 200, r.text
    return {"export": ends[0], "second": ends[1], "response": r, "zip": zipfile.ZipFile(io.BytesIO(r.content))}


def lines(archive, name):
    return [json.loads(line) for line in archive.read(name).decode().splitlines()]


def test_the_export_has_every_file_and_counts_what_the_workspace_holds(exported, seeded):
    export, archive = exported["export"], exported["zip"]
    assert set(archive.namelist()) == FILES
    # Six default statuses; four votes: two end users', one on carol's behalf, and the end user's
    # own vote on the post she wrote (authorVotes).
    expected = {"boards": 2, "statuses": 6, "tags": 2, "fields": 1, "changelogs": 1, "companies": 1, "posts": 4,
                "votes": 4, "comments": 3, "people": 1}
    assert {kind: len(lines(archive, f"{kind}.jsonl")) for kind in expected} == expected
    assert export["counts"] == expected and export["progress"] == {"done": 12, "total": 12}
    assert export["errors"] == [] and export["sizeBytes"] == len(exported["response"].content)
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["formatVersion"] == 1 and manifest["workspace"] == seeded["ws"].slug and manifest["counts"] == expected


def test_the_files_carry_what_an_import_needs(exported, seeded):
    archive, ws = exported["zip"], seeded["ws"]
    posts = {p["title"]: p for p in lines(archive, "posts.jsonl")}
    dark = posts["Dark mode"]
    assert dark["tags"] == ["ux", "api"] and dark["eta"] == "2027-03" and dark["voteCount"] == 2
    assert dark["boardId"] == seeded["boards"][0]["id"] and dark["status"] and dark["createdAt"]
    assert posts["Slow search"]["authorId"] == "sso:alice" and posts["Slow search"]["author"]["name"] == "User alice"
    comments = lines(archive, "comments.jsonl")
    top = next(c for c in comments if c["content"] == "We are on it")
    assert next(c for c in comments if c["content"] == "Thanks!")["parentId"] == top["id"]
    assert next(c for c in comments if c["content"] == "Needs design first")["isPrivate"] is True
    votes = lines(archive, "votes.jsonl")
    assert sorted(v["userId"] for v in votes if v["postId"] == dark["id"]) == ["sso:alice", "sso:bob"]
    people = lines(archive, "people.jsonl")
    assert [p["email"] for p in people] == ["carol@customer.test"] and set(people[0]) == {
        "id", "userId", "email", "name", "avatarUrl", "locale", "role", "createdAt"}
    carol = people[0]["userId"]
    assert any(v["userId"] == carol for v in votes), "a vote on someone's behalf names its person"
    company = lines(archive, "companies.jsonl")[0]
    assert company["name"] == "Globex" and company["monthlySpend"] == 1250.5 and company["members"] == [carol]
    assert lines(archive, "changelogs.jsonl")[0]["postIds"] == [dark["id"]]
    assert {b["slug"] for b in lines(archive, "boards.jsonl")} == {"features", "bugs"}
    assert lines(archive, "fields.jsonl")[0]["options"] == ["smb", "enterprise"]
    settings = json.loads(archive.read("settings.json"))
    assert settings["slug"] == ws.slug and settings["ssoConfigured"] is True and "ssoSecret" not in settings


def test_posts_csv_parses_with_a_row_a_post(exported):
    rows = list(csv.DictReader(io.StringIO(exported["zip"].read("posts.csv").decode("utf-8-sig"))))
    assert len(rows) == 4
    assert list(rows[0]) == ["id", "title", "details", "board", "status", "author email", "author name", "votes", "created",
                             "tags", "eta"]
    by_title = {row["title"]: row for row in rows}
    assert by_title["Dark mode"]["tags"] == "ux,api" and by_title["Dark mode"]["eta"] == "2027-03"
    assert by_title["Dark mode"]["board"] == "Feature requests" and by_title["Dark mode"]["votes"] == "2"
    assert by_title['Crash on "save"']["details"] == 'About Crash on "save"\nsecond line', "quotes and newlines survive"


def test_no_secret_is_anywhere_in_the_zip(exported, seeded):
    archive = exported["zip"]
    everything = exported["response"].content + b"".join(archive.read(name) for name in archive.namelist())
    for secret in seeded["secrets"]:
        assert secret and secret.encode() not in everything
    assert not re.search(rb"fbk_[0-9a-zA-Z]", everything), "no API key"
    assert b"ssoSecret" not in everything and b"tokenHash" not in everything and b"publicKey" not in everything


def test_the_download_is_an_attachment_named_for_the_workspace(exported, seeded):
    r = exported["response"]
    assert r.headers["Content-Type"] == "application/zip"
    day = exported["export"]["createdAt"][:10]
    assert r.headers["Content-Disposition"] == f'attachment; filename="{seeded["ws"].slug}-export-{day}.zip"'


def test_the_list_is_newest_first(api, exported, seeded):
    ws = seeded["ws"]
    items = ok(api.get(f"{ws.path}/exports", key=ws.key))["items"]
    assert [e["id"] for e in items[:2]] == [exported["second"]["id"], exported["export"]["id"]]


def test_only_managers_may_export(api, admin_token, seeded, exported):
    ws = seeded["ws"]
    other = create_workspace(api, admin_token)
    export_id = exported["export"]["id"]
    for path in (f"{ws.path}/exports", f"{ws.path}/exports/{export_id}", f"{ws.path}/exports/{export_id}/download"):
        assert_error(api.get(path), 401)
        assert_error(api.get(path, user=ws.user_token("alice")), 403)
        assert_error(api.get(path, key=other.key), 403)
    assert_error(api.post(f"{ws.path}/exports", user=ws.user_token("alice")), 403)
    assert_error(api.post(f"{ws.path}/exports"), 401)
    assert_error(api.get(f"{ws.path}/exports/000000000000000000000000", key=ws.key), 404)
    assert_error(api.get(f"{other.path}/exports/{export_id}", key=other.key), 404)


def test_a_download_before_success_is_409(api, admin_token):
    ws = create_workspace(api, admin_token)
    started = ok(api.post(f"{ws.path}/exports", key=ws.key), 202)
    r = api.get(f"{ws.path}/exports/{started['id']}/download", key=ws.key)
    if r.status_code != 200:  # the worker may already have finished so small a workspace
        assert_error(r, 409)
    assert finished(api, ws, started["id"])["status"] == "succeeded"


def test_each_export_is_in_the_audit_log(api, exported, seeded):
    ws = seeded["ws"]

    def entries():
        r = api.get(f"{ws.path}/audit-log", key=ws.key, params={"type": "export.created"})
        assert r.status_code == 200, r.text
        items = r.json()["items"]
        return items if len(items) >= 2 else None

    items = wait_for(entries, timeout=20, what="export.created in the audit log")
    assert {e["data"]["exportId"] for e in items} >= {exported["export"]["id"], exported["second"]["id"]}
    assert all(e["actor"] and e["actor"]["id"].startswith("key:") for e in items), "who started it"
