"""Similarity search and the roadmap, through the gateway."""

from .helpers import Board


def test_search_finds_duplicates_a_person_would(board):
    target = board.post("Add a dark theme", "The white background hurts my eyes at night")
    board.post("Export to CSV")
    board.post("Single sign-on with Okta")
    r = board.api.get(f"{board.path}/search", params={"q": "Dark mode please"})
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert items and items[0]["id"] == target["id"]
    assert all(0 <= i["similarity"] <= 1 for i in items)
    assert [i["similarity"] for i in items] == sorted((i["similarity"] for i in items), reverse=True)
    assert set(items[0]) == {*target, "similarity"} - {"revenue", "owner", "score"}, "a Post, as a visitor sees it (the creator is a manager)"


def test_search_handles_typos_boards_and_limits(workspace):
    board = Board(workspace)
    workspace.board("mobile", "Mobile")
    email = board.post("Email notifications when someone replies")
    phone = board.post("Push notifications on iPhone", board="mobile")
    items = board.api.get(f"{board.path}/search", params={"q": "notifcations"}).json()["items"]
    assert {i["id"] for i in items} == {email["id"], phone["id"]}
    items = board.api.get(f"{board.path}/search", params={"q": "notifications", "board": "mobile"}).json()["items"]
    assert [i["id"] for i in items] == [phone["id"]]
    assert len(board.api.get(f"{board.path}/search", params={"q": "notifications", "limit": 1}).json()["items"]) == 1
    assert board.api.get(f"{board.path}/search", params={"q": "zebra quantum"}).json()["items"] == []


def test_search_errors(board):
    for params in ({}, {"q": "   "}, {"q": "x", "limit": 0}, {"q": "x", "limit": 51}, {"q": "x" * 501}):
        r = board.api.get(f"{board.path}/search", params=params)
        assert r.status_code == 400, (params, r.text)
    assert board.api.get("/workspaces/no-such-ws-here/posts/search", params={"q": "x"}).status_code == 404


def test_search_leaves_out_merged_and_unapproved_posts(board):
    a, b = board.post("Dark mode"), board.post("Dark theme")
    spam = board.post("Dark mode casino")
    board.api.patch(f"{board.path}/{spam['id']}", key=board.ws.key, json={"moderationState": "spam"})
    board.api.post(f"{board.path}/{a['id']}/merge", key=board.ws.key, json={"intoPostId": b["id"]})
    items = board.api.get(f"{board.path}/search", params={"q": "dark mode"}).json()["items"]
    assert [i["id"] for i in items] == [b["id"]]
    managers = board.api.get(f"{board.path}/search", key=board.ws.key, params={"q": "dark mode"}).json()["items"]
    assert {i["id"] for i in managers} == {b["id"], spam["id"]}


def test_roadmap_columns_follow_statuses(board):
    ws = board.ws
    p1, p2, p3, p4 = (board.post(f"P{i}") for i in range(1, 5))
    for post, status in ((p1, "planned"), (p2, "planned"), (p3, "closed"), (p4, "in-progress")):
        assert board.api.patch(f"{board.path}/{post['id']}", key=ws.key, json={"statusSlug": status}).status_code == 200
    voter = board.user()
    board.vote(p2["id"], user=voter)
    r = board.api.patch(f"{ws.path}/statuses/under-review", key=ws.key, json={"roadmap": False})
    assert r.status_code == 200, r.text
    from testkit import wait_for

    def roadmap():
        got = board.api.get(f"{ws.path}/roadmap").json()
        return got if "under-review" not in [c["status"]["slug"] for c in got["columns"]] else None

    got = wait_for(roadmap, what="the status change to reach the read model")
    assert [c["status"]["slug"] for c in got["columns"]] == ["open", "planned", "in-progress", "complete"]
    columns = {c["status"]["slug"]: c for c in got["columns"]}
    assert columns["planned"]["status"] == {"slug": "planned", "name": "Planned", "color": "#8b5cf6"}
    assert columns["planned"]["items"] == [
        {"id": p2["id"], "title": "P2", "voteCount": 1, "tags": [], "eta": None, "voted": False},
        {"id": p1["id"], "title": "P1", "voteCount": 0, "tags": [], "eta": None, "voted": False},
    ]
    assert [i["id"] for i in columns["in-progress"]["items"]] == [p4["id"]]
    mine = {c["status"]["slug"]: c["items"] for c in board.api.get(f"{ws.path}/roadmap", user=voter).json()["columns"]}
    assert [i["voted"] for i in mine["planned"]] == [True, False]  # the caller's own votes
    top = {c["status"]["slug"]: c["items"] for c in board.api.get(f"{ws.path}/roadmap", params={"limit": 1}).json()["columns"]}
    assert [i["id"] for i in top["planned"]] == [p2["id"]]  # the limit holds per column
    assert [i["id"] for i in top["in-progress"]] == [p4["id"]]
    # Pending posts leave the roadmap.
    board.api.patch(f"{board.path}/{p4['id']}", key=ws.key, json={"moderationState": "pending"})
    columns = {c["status"]["slug"]: c for c in board.api.get(f"{ws.path}/roadmap").json()["columns"]}
    assert columns["in-progress"]["items"] == []
    assert board.api.get("/workspaces/no-such-ws-here/roadmap").status_code == 404
    assert board.api.get(f"{ws.path}/roadmap", params={"limit": 0}).status_code == 400


def test_roadmap_cards_show_their_tags_and_eta(board):
    """A card says what it is about and when it should ship: the post's tags (as the workspace
    names and colours them) and ETA."""
    ws = board.ws
    r = ws.api.put(f"{ws.path}/triage", key=ws.key, json={"tags": [{"slug": "api", "name": "API", "color": "#0e7490"}], "fields": []})
    assert r.status_code == 200, r.text
    post = board.post("Webhooks for votes")
    r = board.api.patch(f"{board.path}/{post['id']}", key=ws.key, json={"statusSlug": "planned", "tags": ["api"], "eta": "2027-03"})
    assert r.status_code == 200, r.text
    for caller in ({}, {"key": ws.key}):
        columns = {c["status"]["slug"]: c for c in board.api.get(f"{ws.path}/roadmap", **caller).json()["columns"]}
        card = next(i for i in columns["planned"]["items"] if i["id"] == post["id"])
        assert card["tags"] == [{"slug": "api", "name": "API", "color": "#0e7490"}] and card["eta"] == "2027-03"
