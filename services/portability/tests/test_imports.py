"""Imports through the running platform: a Canny export (two boards, users of whom one is an
address the workspace knows already, a company, posts in every Canny status and one of its own,
a merge, a thread with an internal reply, votes, a changelog entry) imported with exact counts,
voters, threads and statuses, twice without a change of any count; a CSV with a bad row; the
route's own body limit; and no mail or webhook of what it brings."""

from __future__ import annotations

import io
import json
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading

import pytest

from testkit import create_workspace, wait_for
from testkit.mail import messages

T = "2024-03-0{}T10:00:00.000Z"
USERS = [
    {"id": "u1", "name": "Ada Admin", "email": "ada@canny.test", "isAdmin": True, "avatarURL": "https://cdn.test/ada.png",
     "created": T.format(1), "companies": []},
    {"id": "u2", "name": "Bob Buyer", "email": "bob@canny.test", "isAdmin": False, "created": T.format(1),
     "companies": [{"id": "c1", "name": "Acme", "monthlySpend": 500}]},
    {"id": "u3", "name": "Carol NoMail", "email": None, "isAdmin": False, "created": T.format(1), "companies": []},
    # The address of someone the workspace knows already (a vote added on their behalf), in capitals.
    {"id": "u4", "name": "Dana Known", "email": "Dana@Customer.test", "isAdmin": False, "created": T.format(2), "companies": []},
]
STATUSES = ["open", "under review", "planned", "in progress", "complete", "closed", "needs info"]


def post(pid, board, status, title, **extra):
    return {"id": pid, "board": {"id": board}, "status": status, "title": title, "details": f"About {title}",
            "author": {"id": "u2", "name": "Bob Buyer"}, "created": T.format(3), "tags": [], "category": None, **extra}


def canny_document() -> dict:
    posts = [post(f"p{i + 1}", "b1" if i < 4 else "b2", status, f"Canny post {status}") for i, status in enumerate(STATUSES)]
    posts[2]["eta"] = "2027-03-01T00:00:00.000Z"
    posts[3].update(tags=[{"id": "t1", "name": "Mobile"}], category={"id": "cat1", "name": "Integrations"},
                    owner={"id": "u1", "name": "Ada Admin"})
    merged = post("p8", "b1", "open", "Canny duplicate of open")
    posts[0]["mergeHistory"] = [{"created": T.format(4), "post": merged}]
    posts.append(merged)
    votes = [{"id": f"v{n}", "post": {"id": p}, "voter": {"id": u}, "created": T.format(5)}
             for n, (p, u) in enumerate([("p1", "u1"), ("p1", "u2"), ("p1", "u3"), ("p8", "u2"), ("p8", "u4"), ("p3", "u2")])]
    # Canny lists newest first: the reply before the comment it answers.
    comments = [
        {"id": "m2", "post": {"id": "p1"}, "author": {"id": "u2"}, "value": "Thanks!", "parentID": "m1", "internal": False,
         "imageURLs": ["https://cdn.test/x.png"], "created": T.format(7)},
        {"id": "m1", "post": {"id": "p1"}, "author": {"id": "u1"}, "value": "We are on it", "parentID": None, "internal": False,
         "created": T.format(6)},
        {"id": "m3", "post": {"id": "p1"}, "author": {"id": "u1"}, "value": "Needs design first", "parentID": None,
         "internal": True, "created": T.format(8)},
    ]
    return {
        "boards": [{"id": "b1", "name": "Feature Requests", "urlName": "feature-requests", "created": T.format(1)},
                   {"id": "b2", "name": "Bugs", "urlName": "bugs", "created": T.format(1)}],
        "categories": [{"id": "cat1", "name": "Integrations", "board": {"id": "b1"}}],
        "tags": [{"id": "t1", "name": "Mobile", "board": {"id": "b1"}}],
        "users": USERS,
        "companies": [{"id": "c1", "name": "Acme", "monthlySpend": 500, "created": T.format(1)}],
        "posts": posts, "votes": votes, "comments": comments,
        "entries": [{"id": "e1", "title": "Dark mode is here", "markdownDetails": "Enjoy it.", "status": "published",
                     "publishedAt": T.format(9), "created": T.format(9), "posts": [{"id": "p5"}]}],
    }


EXPECTED = {"boards": 2, "statuses": 7, "tags": 2, "fields": 0, "people": 4, "companies": 1, "posts": 8, "merges": 1, "votes": 6,
            "comments": 3, "changelogs": 1, "settings": 0}


class Receiver(BaseHTTPRequestHandler):
    bodies: list[dict] = []

    def do_POST(self):
        Receiver.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def ok(r, status=200):
    assert r.status_code == status, r.text
    return r.json()


def finished(api, ws, import_id):
    def done():
        body = ok(api.get(f"{ws.path}/imports/{import_id}", key=ws.key))
        return body if body["status"] in ("succeeded", "failed") else None
    return wait_for(done, timeout=60, what=f"import {import_id}")


def start(api, ws, body: bytes, content_type: str, **params):
    return ok(api.post(f"{ws.path}/imports", key=ws.key, params=params, data=body, headers={"Content-Type": content_type}), 202)


@pytest.fixture(scope="module")
def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()


@pytest.fixture(scope="module")
def imported(api, admin_token, receiver):
    """A workspace that knows dana@customer.test (a vote on her behalf) and has a webhook for
    every event, the Canny document imported into it twice (the second time as a zip)."""
    ws = create_workspace(api, admin_token, name="Imported")
    board = ws.board("existing", "Existing")
    existing = ok(api.post(f"{ws.path}/posts", key=ws.key, json={"boardId": board["id"], "title": "Already here", "content": ""}), 201)
    ok(api.post(f"{ws.path}/posts/{existing['id']}/votes", key=ws.key, json={"email": "dana@customer.test"}), 201)
    dana = next(v for v in ok(api.get(f"{ws.path}/posts/{existing['id']}/votes", key=ws.key))["items"])["userId"]
    ok(api.post(f"{ws.path}/webhooks", key=ws.key, json={"url": receiver}), 201)
    document = json.dumps(canny_document()).encode()
    first = start(api, ws, document, "application/json", source="canny")
    assert first["status"] == "queued" and first["source"] == "canny"
    first = finished(api, ws, first["id"])
    # Again, as Canny's lists in a zip, one JSON file each (some as the API answers them: {"posts": [...]}).
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for name, items in canny_document().items():
            z.writestr(f"canny/{name}.json", json.dumps({name: items, "hasMore": False} if name in ("posts", "users") else items))
    second = finished(api, ws, start(api, ws, archive.getvalue(), "application/zip", source="canny")["id"])
    return {"ws": ws, "first": first, "second": second, "dana": dana, "mail_before": None}


def posts_by_title(api, ws) -> dict:
    items = ok(api.get(f"{ws.path}/posts", key=ws.key, params={"limit": 100, "sort": "newest"}))["items"]
    return {p["title"]: p for p in items}


def test_a_canny_export_imports_with_exact_counts(imported):
    first = imported["first"]
    assert first["status"] == "succeeded", first["errors"]
    assert first["errors"] == [] and first["errorCount"] == 0, first["errors"]
    assert first["counts"] == EXPECTED
    assert first["progress"]["done"] == first["progress"]["total"] > 0


def test_importing_it_again_changes_no_count(api, imported):
    second, ws = imported["second"], imported["ws"]
    assert second["status"] == "succeeded" and second["counts"] == EXPECTED, second
    listed = ok(api.get(f"{ws.path}/imports", key=ws.key))["items"]
    assert [i["id"] for i in listed] == [second["id"], imported["first"]["id"]]
    # 8 imported posts (one merged, off the list) and the one that was there.
    titles = posts_by_title(api, ws)
    assert len([t for t in titles if t.startswith("Canny post")]) == 7 and "Already here" in titles
    boards = ok(api.get(f"{ws.path}/boards", key=ws.key))["items"]
    assert sorted(b["slug"] for b in boards) == ["bugs", "existing", "feature-requests"]


def test_statuses_voters_threads_and_merges_come_across(api, imported):
    ws = imported["ws"]
    titles = posts_by_title(api, ws)
    assert {titles[f"Canny post {s}"]["status"]["slug"] for s in STATUSES} == {
        "open", "under-review", "planned", "in-progress", "complete", "closed", "needs-info"}
    statuses = {s["slug"]: s for s in ok(api.get(f"{ws.path}/statuses", key=ws.key))["items"]}
    assert statuses["needs-info"]["name"] == "Needs info"
    opened = titles["Canny post open"]
    # u1, u2 and u3 voted on it; u2 and u4 on its duplicate: u4 counts here after the merge, u2 once.
    assert opened["voteCount"] == 4
    voters = ok(api.get(f"{ws.path}/posts/{opened['id']}/votes", key=ws.key))["items"]
    assert imported["dana"] in {v["userId"] for v in voters}  # the same person as the address the workspace knew
    assert {v["name"] for v in voters} >= {"Ada Admin", "Bob Buyer", "Carol NoMail"}
    thread = ok(api.get(f"{ws.path}/posts/{opened['id']}/comments", key=ws.key))["items"]
    by_text = {c["content"]: c for c in thread}
    assert by_text["Thanks!"]["parentId"] == by_text["We are on it"]["id"]
    assert by_text["Needs design first"]["isPrivate"] is True and by_text["We are on it"]["isPrivate"] is False
    assert by_text["We are on it"]["author"]["name"] == "Ada Admin"
    full = ok(api.get(f"{ws.path}/posts/{opened['id']}", key=ws.key))
    assert [m["title"] for m in full.get("mergedPosts", [])] == ["Canny duplicate of open"]
    planned = ok(api.get(f"{ws.path}/posts/{titles['Canny post planned']['id']}", key=ws.key))
    assert planned["eta"] == "2027-03"
    progress = ok(api.get(f"{ws.path}/posts/{titles['Canny post in progress']['id']}", key=ws.key))
    assert sorted(t["slug"] for t in progress["tags"]) == ["integrations", "mobile"]
    [entry] = ok(api.get(f"{ws.path}/changelogs", key=ws.key))["items"]
    assert entry["title"] == "Dark mode is here" and entry["postIds"] == [titles["Canny post complete"]["id"]]


def test_a_csv_with_a_bad_row_imports_the_rest_and_names_the_row(api, admin_token):
    ws = create_workspace(api, admin_token, name="Spreadsheet")
    rows = ("Title,Description,Board,Status,Author email,Votes,Tags\n"
            "Dark mode,Please,Features,Planned,erin@csv.test,3,\"ui, themes\"\n"
            ",No title here,Features,Open,,0,\n"
            "Export to PDF,,Reports,In progress,,1,\n")
    job = start(api, ws, rows.encode(), "text/csv", source="csv", **{"map.title": "Title", "map.details": "Description",
                                                                      "map.board": "Board", "map.status": "Status",
                                                                      "map.authorEmail": "Author email", "map.votes": "Votes",
                                                                      "map.tags": "Tags"})
    done = finished(api, ws, job["id"])
    assert done["status"] == "succeeded", done
    assert done["counts"]["posts"] == 2 and done["counts"]["boards"] == 2 and done["counts"]["votes"] == 4
    assert done["errors"] == [{"item": "row 3", "message": "its title (column 'Title') is empty"}]
    titles = posts_by_title(api, ws)
    assert titles["Dark mode"]["voteCount"] == 3 and titles["Dark mode"]["status"]["slug"] == "planned"
    assert sorted(t["slug"] for t in titles["Dark mode"]["tags"]) == ["themes", "ui"]


def test_a_file_that_is_not_what_it_says_fails_the_import(api, admin_token):
    ws = create_workspace(api, admin_token, name="Broken")
    r = api.post(f"{ws.path}/imports", key=ws.key, params={"source": "canny"}, data=b"this is no JSON",
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "JSON object" in r.json()["error"], r.text
    done = finished(api, ws, start(api, ws, b'{"posts": [{"id": "p1", "title": "Cut short"', "application/json", source="canny")["id"])
    assert done["status"] == "failed" and "not valid JSON" in done["errors"][-1]["message"], done
    r = api.post(f"{ws.path}/imports", key=ws.key, params={"source": "csv"}, data=b"a,b\n", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415, r.text
    # A CSV sent as a Canny import is taken, and fails as what it is.
    done = finished(api, ws, start(api, ws, b"title\nx\n", "text/csv", source="canny")["id"])
    assert done["status"] == "failed" and "not CSV" in done["errors"][-1]["message"]


def test_the_import_route_takes_a_megabyte_another_route_does_not(api, admin_token):
    ws = create_workspace(api, admin_token, name="Big")
    # A Canny document of one board, padded past a megabyte (white space: read in no time).
    big = b'{"boards": [{"id": "b1", "name": "Big", "urlName": "big"}]' + b" " * (1024 * 1024) + b"}"
    job = start(api, ws, big, "application/json", source="canny")
    assert job["sizeBytes"] == len(big)
    assert finished(api, ws, job["id"])["counts"]["boards"] == 1
    r = api.post(f"{ws.path}/posts", key=ws.key, data=b"{" + b" " * (1024 * 1024) + b"}", headers={"Content-Type": "application/json"})
    assert r.status_code == 413, r.text


def test_an_import_mails_nobody_and_fires_no_webhook(api, imported, maildir):
    """The webhook hears a post created through the API after the imports (events go out in
    order): by then, nothing of what the imports brought has been delivered, and no mail went
    to any imported address."""
    ws = imported["ws"]
    board = ok(api.get(f"{ws.path}/boards", key=ws.key))["items"][0]
    marker = ok(api.post(f"{ws.path}/posts", key=ws.key, json={"boardId": board["id"], "title": "After the import", "content": ""}), 201)
    wait_for(lambda: [b for b in Receiver.bodies if marker["id"] in json.dumps(b)], timeout=30, what="the marker's webhook")
    history = [b["type"] for b in Receiver.bodies if b["type"].split(".")[0] in ("post", "vote", "comment", "changelog", "merge")
               and marker["id"] not in json.dumps(b) and "Already here" not in json.dumps(b)]
    assert history == []
    imported_addresses = {u["email"].lower() for u in USERS if u["email"]}
    sent_to = {str(m["To"]).lower() for m in messages(maildir)}
    assert not any(address in to for to in sent_to for address in imported_addresses)
    # Its end is an event like any (from another service's outbox: it may come after the marker).
    wait_for(lambda: "import.finished" in {b["type"] for b in Receiver.bodies}, timeout=30, what="import.finished delivered")


def test_each_import_is_in_the_audit_log(api, imported):
    ws = imported["ws"]

    def logged():
        entries = ok(api.get(f"{ws.path}/audit-log", key=ws.key, params={"type": "import.finished"}))["items"]
        return entries if len(entries) == 2 else None

    entries = wait_for(logged, timeout=30, what="the imports in the audit log")
    assert {e["data"]["importId"] for e in entries} == {imported["first"]["id"], imported["second"]["id"]}
    assert {e["data"]["status"] for e in entries} == {"succeeded"}
