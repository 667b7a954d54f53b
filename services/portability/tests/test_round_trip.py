"""Our own export imported into a new workspace gives the same board: a workspace seeded through
the API with every kind (boards, a recoloured and a new status, tags, a custom field and its
value, posts in several statuses with tags, an ETA and an owner, a merge, votes of end users and
on someone's behalf, a thread with a private reply, a company with its spend and member, a
changelog entry, settings), exported, downloaded, imported with ``source=ours``, then both read
through the public API and compared, ids aside. The same zip imported again changes no count."""

from __future__ import annotations

import pytest

from testkit import create_workspace, wait_for


def ok(r, status=200):
    assert r.status_code == status, r.text
    return r.json()


def finished(api, ws, path):
    def done():
        body = ok(api.get(f"{ws.path}/{path}", key=ws.key))
        return body if body["status"] in ("succeeded", "failed") else None
    return wait_for(done, timeout=60, what=path)


@pytest.fixture(scope="module")
def source(api, admin_token):
    ws = create_workspace(api, admin_token, name="Round trip source")
    features, bugs = ws.board("features", "Feature requests"), ws.board("bugs", "Bugs")
    ok(api.put(f"{ws.path}/triage", key=ws.key, json={
        "tags": [{"slug": "ux", "name": "UX", "color": "#336699"}, {"slug": "api", "name": "API", "color": "#993366"}],
        "fields": [{"key": "segment", "name": "Segment", "type": "select", "options": ["smb", "enterprise"]}]}))
    ok(api.patch(f"{ws.path}/statuses/planned", key=ws.key, json={"color": "#123456", "roadmap": False}))
    ok(api.post(f"{ws.path}/statuses", key=ws.key, json={"slug": "shipped", "name": "Shipped", "color": "#00aa00"}), 201)
    ok(api.patch(f"{ws.path}/settings", key=ws.key, json={"primaryColor": "#aa3300", "anonVote": True}))

    def new_post(board, title, **as_):
        return ok(api.post(f"{ws.path}/posts", **(as_ or {"key": ws.key}), json={"boardId": board["id"], "title": title,
                                                                                  "content": f"About {title}"}), 201)

    dark, csv_import, crash, dupe = (new_post(features, "Dark mode"), new_post(features, "CSV import"),
                                     new_post(bugs, "Crash on save"), new_post(features, "Night theme"))
    slow = new_post(bugs, "Slow search", user=ws.user_token("alice"))
    ok(api.patch(f"{ws.path}/posts/{dark['id']}", key=ws.key, json={"tags": ["ux", "api"], "eta": "2027-03", "statusSlug": "planned",
                                                                     "fields": {"segment": "enterprise"}}))
    ok(api.patch(f"{ws.path}/posts/{crash['id']}", key=ws.key, json={"statusSlug": "shipped"}))
    for user in ("alice", "bob"):
        assert api.post(f"{ws.path}/posts/{dark['id']}/vote", user=ws.user_token(user)).status_code in (200, 201)
    assert api.post(f"{ws.path}/posts/{dupe['id']}/vote", user=ws.user_token("carl")).status_code in (200, 201)
    ok(api.post(f"{ws.path}/posts/{csv_import['id']}/votes", key=ws.key, json={"email": "carol@customer.test"}), 201)
    ok(api.post(f"{ws.path}/posts/{dupe['id']}/merge", key=ws.key, json={"intoPostId": dark["id"]}))
    top = ok(api.post(f"{ws.path}/posts/{dark['id']}/comments", key=ws.key, json={"content": "We are on it"}), 201)
    ok(api.post(f"{ws.path}/posts/{dark['id']}/comments", user=ws.user_token("bob"),
                json={"content": "Thanks!", "parentId": top["id"]}), 201)
    ok(api.post(f"{ws.path}/posts/{dark['id']}/comments", key=ws.key, json={"content": "Needs design first", "isPrivate": True}), 201)
    ok(api.post(f"{ws.path}/posts/{slow['id']}/comments", user=ws.user_token("alice"), json={"content": "Still slow"}), 201)
    ok(api.post(f"{ws.path}/changelogs", key=ws.key, json={"title": "Dark mode is here", "slug": "dark-mode", "content": "Enjoy.",
                                                              "postIds": [dark["id"], crash["id"]], "publish": True}), 201)
    assert api.put(f"{ws.path}/companies/globex", key=ws.key, json={"name": "Globex", "monthlySpend": 1250.5}).status_code in (200, 201)
    ok(api.post(f"{ws.path}/companies/globex/members", key=ws.key, json={"email": "carol@customer.test"}))
    return ws


@pytest.fixture(scope="module")
def archive(api, source):
    started = ok(api.post(f"{source.path}/exports", key=source.key), 202)
    assert finished(api, source, f"exports/{started['id']}")["status"] == "succeeded"
    r = api.get(f"{source.path}/exports/{started['id']}/download", key=source.key)
    assert r.status_code == 200, r.text
    return r.content


def run_import(api, ws, body: bytes) -> dict:
    started = ok(api.post(f"{ws.path}/imports", key=ws.key, params={"source": "ours"}, data=body,
                          headers={"Content-Type": "application/zip"}), 202)
    return finished(api, ws, f"imports/{started['id']}")


@pytest.fixture(scope="module")
def target(api, admin_token, archive):
    ws = create_workspace(api, admin_token, name="Round trip target")
    first = run_import(api, ws, archive)
    assert first["status"] == "succeeded" and first["errors"] == [], first
    return {"ws": ws, "first": first, "board": board_of(api, ws)}


def board_of(api, ws) -> dict:
    """What a visitor and the team see of the workspace, ids replaced by what they name."""
    boards = ok(api.get(f"{ws.path}/boards", key=ws.key))["items"]
    board_names = {b["id"]: b["name"] for b in boards}
    listed = ok(api.get(f"{ws.path}/posts", key=ws.key, params={"limit": 100, "sort": "newest"}))["items"]
    posts = {p["id"]: p for p in listed}
    for p in listed:  # merged posts are not listed: read through the one they went into
        for m in p["mergedPosts"]:
            posts[m["id"]] = ok(api.get(f"{ws.path}/posts/{m['id']}", key=ws.key))
    titles = {pid: p["title"] for pid, p in posts.items()}
    shown = {}
    for pid, p in posts.items():
        comments = ok(api.get(f"{ws.path}/posts/{pid}/comments", key=ws.key))["items"]
        by_id = {c["id"]: c for c in comments}
        shown[p["title"]] = {
            "board": board_names[p["boardId"]], "status": p["status"]["slug"], "tags": p.get("tags"), "eta": p.get("eta"),
            "fields": p.get("fields"), "voteCount": p["voteCount"], "commentCount": p["commentCount"],
            "content": p["content"], "createdAt": p["createdAt"], "moderationState": p["moderationState"],
            "mergedInto": (p["mergedInto"] or {}).get("title"), "merged": sorted((m["title"], m["voteCount"]) for m in p["mergedPosts"]),
            "voters": sorted((v.get("name") or "", v["createdAt"]) for v in
                             ok(api.get(f"{ws.path}/posts/{pid}/votes", key=ws.key))["items"]),
            "comments": sorted((c["content"], c["isPrivate"], c["isTeamMember"], c["createdAt"],
                                by_id[c["parentId"]]["content"] if c.get("parentId") else None) for c in comments),
        }
    statuses = ok(api.get(f"{ws.path}/statuses", key=ws.key))["items"]
    changelogs = ok(api.get(f"{ws.path}/changelogs", key=ws.key))["items"]
    companies = ok(api.get(f"{ws.path}/companies", key=ws.key))["items"]
    settings = ok(api.get(f"{ws.path}/settings", key=ws.key))
    triage = ok(api.get(f"{ws.path}/triage", key=ws.key))
    return {
        "boards": sorted((b["slug"], b["name"]) for b in boards),
        "statuses": sorted((s["slug"], s["name"], s["color"], s["roadmap"], s["closed"]) for s in statuses),
        "posts": shown,
        "changelogs": sorted((e["title"], e["slug"], e["content"], bool(e["publishedAt"]), sorted(titles[p] for p in e["postIds"]))
                             for e in changelogs),
        "companies": sorted((c["id"], c["name"], c["monthlySpend"],
                             len(ok(api.get(f"{ws.path}/companies/{c['id']}/members", key=ws.key))["items"])) for c in companies),
        "settings": {k: settings[k] for k in ("primaryColor", "anonVote", "theme", "authorVotes")},
        "triage": {"tags": triage["tags"], "fields": triage["fields"]},
    }


def test_the_imported_board_is_the_exported_one(api, source, target):
    before, after = board_of(api, source), target["board"]
    for part in before:
        if part == "posts":
            for title in before[part]:
                assert after[part].get(title) == before[part][title], title
        assert after[part] == before[part], part
    dark = after["posts"]["Dark mode"]
    # The comparison saw what it should: the seeded shape is there on both sides.
    assert dark["merged"] == [("Night theme", 1)] and dark["voteCount"] == 3 and dark["commentCount"] == 3
    assert [t["slug"] for t in dark["tags"]] == ["ux", "api"] and dark["status"] == "planned", dark
    assert "enterprise" in str(dark["fields"]), dark
    assert after["posts"]["Night theme"]["mergedInto"] == "Dark mode"
    assert [c[4] for c in dark["comments"] if c[0] == "Thanks!"] == ["We are on it"], dark["comments"]
    assert ("shipped", "Shipped", "#00aa00", True, False) in after["statuses"]
    assert after["companies"] == [("globex", "Globex", 1250.5, 1)]


def test_the_import_counts_what_the_export_holds(target):
    counts = target["first"]["counts"]
    assert counts == {"boards": 2, "statuses": 7, "tags": 2, "fields": 1, "people": 1, "companies": 1, "posts": 5, "merges": 1,
                      "votes": 5, "comments": 4, "changelogs": 1, "settings": 1}
    assert target["first"]["progress"]["done"] == target["first"]["progress"]["total"]


def test_importing_the_same_zip_again_changes_no_count(api, archive, target):
    ws = target["ws"]
    again = run_import(api, ws, archive)
    assert again["status"] == "succeeded" and again["errors"] == [], again
    assert again["counts"] == target["first"]["counts"]
    assert board_of(api, ws) == target["board"]


def test_our_posts_csv_still_imports_as_ours(api, admin_token, archive):
    import io
    import zipfile
    ws = create_workspace(api, admin_token, name="Round trip csv")
    posts_csv = zipfile.ZipFile(io.BytesIO(archive)).read("posts.csv")
    started = ok(api.post(f"{ws.path}/imports", key=ws.key, params={"source": "ours"}, data=posts_csv,
                          headers={"Content-Type": "text/csv"}), 202)
    done = finished(api, ws, f"imports/{started['id']}")
    assert done["status"] == "succeeded" and done["errors"] == [], done
    assert done["counts"]["posts"] == 5 and done["counts"]["boards"] == 2
