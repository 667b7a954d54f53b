"""Boards and statuses as the team manages them, through the gateway: ordering, archiving versus
deleting, what visitors see, and the refusals (docs/services/workspaces.md, "Boards")."""

from testkit import assert_error, wait_for


def boards(ws, **kw):
    r = ws.api.get(f"{ws.path}/boards", **kw)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def slugs(items):
    return [b["slug"] for b in items]


def post_on(ws, board, title="An idea"):
    return ws.api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": board, "title": title, "content": ""})


def test_boards_come_in_their_order_and_move(workspace):
    ws = workspace
    made = [ws.board(s, s.title()) for s in ("alpha", "beta", "gamma")]
    assert [b["position"] for b in made] == [0, 1, 2]
    assert made[0]["archived"] is False and made[0]["description"] == "" and made[0]["createdAt"]
    assert slugs(boards(ws)) == ["alpha", "beta", "gamma"]
    gamma = made[2]["id"]
    r = ws.api.patch(f"{ws.path}/boards/{gamma}", key=ws.key, json={"position": 0, "name": "Gamma rays", "description": "Light"})
    assert r.status_code == 200, r.text
    assert r.json() == {**made[2], "position": 0, "name": "Gamma rays", "description": "Light"}
    listed = boards(ws)  # anyone sees the order the team chose
    assert slugs(listed) == ["gamma", "alpha", "beta"] and [b["position"] for b in listed] == [0, 1, 2]
    assert listed[0]["name"] == "Gamma rays" and listed[0]["description"] == "Light"
    # past the end: last
    r = ws.api.patch(f"{ws.path}/boards/{gamma}", key=ws.key, json={"position": 1000})
    assert r.status_code == 200 and r.json()["position"] == 2
    assert slugs(boards(ws)) == ["alpha", "beta", "gamma"]
    # a description comes with a new board too
    r = ws.api.post(f"{ws.path}/boards", key=ws.key, json={"slug": "delta", "name": "Delta", "description": "Fourth"})
    assert r.status_code == 201 and r.json()["description"] == "Fourth" and r.json()["position"] == 3


def test_an_archived_board_is_hidden_from_visitors_and_takes_no_new_posts(workspace):
    ws = workspace
    ws.board("features", "Features")
    old = ws.board("old", "Old ideas")
    r = post_on(ws, "old", "Kept after archiving")
    assert r.status_code == 201, r.text
    kept = r.json()
    r = ws.api.patch(f"{ws.path}/boards/{old['id']}", key=ws.key, json={"archived": True})
    assert r.status_code == 200 and r.json()["archived"] is True
    # hidden from every default list, the team's too; the team lists it with archived=true
    assert slugs(boards(ws)) == ["features"]
    assert slugs(boards(ws, key=ws.key)) == ["features"]
    everything = boards(ws, key=ws.key, params={"archived": "true"})
    assert slugs(everything) == ["features", "old"] and [b["archived"] for b in everything] == [False, True]
    assert "team" in assert_error(ws.api.get(f"{ws.path}/boards", params={"archived": "true"}), 403)
    assert_error(ws.api.get(f"{ws.path}/boards", user=ws.user_token("visitor"), params={"archived": "true"}), 403)
    assert_error(ws.api.get(f"{ws.path}/boards", key=ws.key, params={"archived": "yes"}), 400)
    # no new post (once the posts service has heard), but its posts stay readable
    # (a response is falsy when it is an error: wait for a list holding it)
    refused = wait_for(lambda: [r for r in [post_on(ws, "old")] if r.status_code == 409], what="archived board refusing posts")
    assert "archived" in assert_error(refused[0], 409)
    by_id = ws.api.post(f"{ws.path}/posts", key=ws.key, json={"boardId": old["id"], "title": "By id", "content": ""})
    assert "archived" in assert_error(by_id, 409)
    assert ws.api.get(f"{ws.path}/posts/{kept['id']}").json()["title"] == "Kept after archiving"
    listed = ws.api.get(f"{ws.path}/posts", params={"board": "old", "sort": "oldest"}).json()["items"]
    assert listed[0]["id"] == kept["id"]  # (and any the board took before the posts service heard)
    assert post_on(ws, "features").status_code == 201
    # unarchived, it takes posts again
    r = ws.api.patch(f"{ws.path}/boards/{old['id']}", key=ws.key, json={"archived": False})
    assert r.status_code == 200 and r.json()["archived"] is False
    assert slugs(boards(ws)) == ["features", "old"]
    wait_for(lambda: post_on(ws, "old").status_code == 201, what="unarchived board taking posts")


def test_a_board_with_posts_is_never_deleted_an_empty_one_is(workspace):
    ws = workspace
    busy = ws.board("busy", "Busy")
    empty = ws.board("empty", "Empty")
    assert post_on(ws, "busy").status_code == 201
    message = assert_error(ws.api.delete(f"{ws.path}/boards/{busy['id']}", key=ws.key), 409)
    assert "has posts" in message and "archive" in message
    # archived, still not deletable: its posts are kept
    assert ws.api.patch(f"{ws.path}/boards/{busy['id']}", key=ws.key, json={"archived": True}).status_code == 200
    assert_error(ws.api.delete(f"{ws.path}/boards/{busy['id']}", key=ws.key), 409)
    r = ws.api.delete(f"{ws.path}/boards/{empty['id']}", key=ws.key)
    assert r.status_code == 200 and r.json()["slug"] == "empty"
    assert slugs(boards(ws, key=ws.key, params={"archived": "true"})) == ["busy"]
    assert_error(ws.api.delete(f"{ws.path}/boards/{empty['id']}", key=ws.key), 404)
    # its slug is free again
    assert ws.api.post(f"{ws.path}/boards", key=ws.key, json={"slug": "empty", "name": "Again"}).status_code == 201


def test_board_changes_are_the_teams_and_checked(workspace, other_workspace):
    ws = workspace
    board = ws.board("features", "Features")
    item = f"{ws.path}/boards/{board['id']}"
    for method in ("patch", "delete"):
        call = getattr(ws.api, method)
        body = {"json": {"name": "x"}} if method == "patch" else {}
        assert_error(call(item, **body), 401)
        assert_error(call(item, user=ws.user_token("someone"), **body), 403)
        assert_error(call(item, key=other_workspace.key, **body), 403)
        assert_error(call(f"{ws.path}/boards/no-such-board", key=ws.key, **body), 404)
    for bad in ({"name": ""}, {"position": -1}, {"archived": "yes"}, {"slug": "renamed"}, {"description": "x" * 501}):
        assert_error(ws.api.patch(item, key=ws.key, json=bad), 400)
    assert boards(ws) == [{**board}]  # nothing changed


def test_statuses_count_as_closed_and_unused_ones_are_deleted(workspace):
    ws = workspace
    path = f"{ws.path}/statuses"
    defaults = ws.api.get(path).json()["items"]
    assert {s["slug"]: s["closed"] for s in defaults} == {
        "open": False, "under-review": False, "planned": False, "in-progress": False, "complete": True, "closed": True}
    r = ws.api.post(path, key=ws.key, json={"slug": "wont-do", "name": "Won't do", "color": "#111111", "roadmap": False,
                                            "closed": True, "order": 1})
    assert r.status_code == 201 and r.json() == {"slug": "wont-do", "name": "Won't do", "color": "#111111", "order": 1,
                                                 "roadmap": False, "closed": True}
    r = ws.api.patch(f"{path}/planned", key=ws.key, json={"closed": True, "color": "#123456", "order": 0})
    assert r.status_code == 200 and r.json()["closed"] is True and r.json()["order"] == 0
    assert ws.api.post(path, key=ws.key, json={"slug": "x", "name": "X", "color": "#111111"}).json()["closed"] is False
    # a status a post is in stays; an unused one goes
    ws.board("features", "Features")
    assert post_on(ws, "features").status_code == 201  # in "open"
    assert "in use" in assert_error(ws.api.delete(f"{path}/open", key=ws.key), 409)
    r = ws.api.delete(f"{path}/wont-do", key=ws.key)
    assert r.status_code == 200 and r.json()["slug"] == "wont-do"
    assert "wont-do" not in [s["slug"] for s in ws.api.get(path).json()["items"]]
    assert_error(ws.api.delete(f"{path}/wont-do", key=ws.key), 404)
    assert_error(ws.api.delete(f"{path}/x"), 401)
    assert_error(ws.api.delete(f"{path}/x", user=ws.user_token("someone")), 403)
    assert_error(ws.api.patch(f"{path}/x", key=ws.key, json={"closed": "yes"}), 400)


def test_the_last_status_is_never_deleted(other_workspace):
    ws = other_workspace
    path = f"{ws.path}/statuses"
    slugs_now = [s["slug"] for s in ws.api.get(path).json()["items"]]
    for slug in slugs_now[:-1]:
        assert ws.api.delete(f"{path}/{slug}", key=ws.key).status_code == 200
    assert "last" in assert_error(ws.api.delete(f"{path}/{slugs_now[-1]}", key=ws.key), 409)
