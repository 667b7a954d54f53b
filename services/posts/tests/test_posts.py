"""Create, list, read and change posts, through the gateway."""

import uuid

import pytest

from testkit import assert_error, wait_for
from .helpers import Board, anon

POST_FIELDS = {
    "id", "title", "content", "boardId", "status", "voteCount", "commentCount", "verified",
    "moderationState", "voted", "mergedInto", "mergedPosts", "createdAt",
    "editedAt", "mine", "editableUntil",  # its author's window to edit and delete it (test_delete_edit.py)
    "tags", "eta", "fields",  # triage, as end users see it (docs/services/posts.md, "Triage and scores")
    "author",  # who wrote it (test_authors.py)
}


def test_create_post_returns_the_spec_shape(board):
    user = board.user("alice")
    r = board.api.post(board.path, user=user, json={"boardSlug": "features", "title": "  Dark mode  ", "content": "# Please\n\n*dark*"})
    assert r.status_code == 201, r.text
    post = r.json()
    assert set(post) == POST_FIELDS
    assert post["title"] == "Dark mode"
    assert post["content"] == "# Please\n\n*dark*"  # markdown stored as written
    assert post["boardId"] == board.board["id"]
    assert post["status"] == {"slug": "open", "name": "Open", "color": "#64748b"}
    assert (post["voteCount"], post["commentCount"], post["voted"]) == (1, 0, True)  # the author's vote (authorVotes)
    assert post["verified"] is True and post["moderationState"] == "approved"
    assert post["mergedInto"] is None and post["mergedPosts"] == []
    assert len(post["id"]) == 24 and post["createdAt"].endswith("Z")
    assert post["author"] == {"name": "User alice", "avatarUrl": None, "isTeamMember": False}


def test_post_on_a_board_created_a_moment_ago(workspace):
    # The read model may not have the board yet: the service asks the workspaces service.
    for i in range(3):
        workspace.board(f"fresh-{i}", f"Fresh {i}")
        r = workspace.api.post(f"{workspace.path}/posts", key=workspace.key, json={"boardSlug": f"fresh-{i}", "title": "t", "content": ""})
        assert r.status_code == 201, r.text


def test_create_post_names_its_board_by_id_or_slug(workspace):
    features = workspace.board("features", "Features")
    board_path = f"{workspace.path}/posts"
    r = workspace.api.post(board_path, key=workspace.key, json={"boardId": features["id"], "title": "By id", "content": ""})
    assert r.status_code == 201, r.text
    by_id = r.json()
    assert by_id["boardId"] == features["id"]
    # A board added a moment ago, named by its id: the read model asks the owner as for a slug.
    fresh = workspace.board("fresh", "Fresh")
    r = workspace.api.post(board_path, key=workspace.key, json={"boardId": fresh["id"], "title": "Fresh", "content": ""})
    assert r.status_code == 201 and r.json()["boardId"] == fresh["id"], r.text
    fresh_post = r.json()
    # Every post answer carries its board's id: a post, a list, a search.
    assert workspace.api.get(f"{board_path}/{by_id['id']}", key=workspace.key).json()["boardId"] == features["id"]
    listed = workspace.api.get(board_path, key=workspace.key, params={"board": "features"}).json()["items"]
    assert [(p["id"], p["boardId"]) for p in listed] == [(by_id["id"], features["id"])]
    found = workspace.api.get(f"{board_path}/search", key=workspace.key, params={"q": "fresh"}).json()["items"]
    assert {p["id"]: p["boardId"] for p in found}[fresh_post["id"]] == fresh["id"]


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"title": "x", "content": "y"}, 400, "one of 'boardSlug' or 'boardId'"),
        ({"boardSlug": "features", "boardId": "0" * 24, "title": "x", "content": "y"}, 400, "one of 'boardSlug' or 'boardId'"),
        ({"boardId": "", "title": "x", "content": "y"}, 400, "boardId"),
        ({"boardId": "0" * 24, "title": "x", "content": "y"}, 404, "boardId"),
        ({"boardSlug": "features", "content": "y"}, 400, "title"),
        ({"boardSlug": "features", "title": "x"}, 400, "content"),
        ({"boardSlug": "features", "title": "   ", "content": "y"}, 400, "title"),
        ({"boardSlug": "features", "title": "x" * 201, "content": "y"}, 400, "title"),
        ({"boardSlug": "features", "title": 5, "content": "y"}, 400, "title"),
        ({"boardSlug": "features", "title": "x", "content": "y", "extra": 1}, 400, "extra"),
        ({"boardSlug": "nope", "title": "x", "content": "y"}, 404, "boardSlug"),
        ({"boardSlug": "features", "title": "x", "content": "y" * 20_001}, 413, "content"),
    ],
)
def test_create_post_refuses_bad_input(board, body, status, words):
    r = board.api.post(board.path, key=board.ws.key, json=body)
    assert r.status_code == status, r.text
    assert words in r.json()["error"]


def test_create_post_anonymous_needs_anon_submit(board):
    r = board.api.post(board.path, headers=anon(), json={"boardSlug": "features", "title": "x", "content": "y"})
    assert r.status_code == 401, r.text
    board.ws.settings(anonSubmit=True)

    def submit():
        r = board.api.post(board.path, headers=anon(), json={"boardSlug": "features", "title": "x", "content": "y"})
        return r if r.status_code != 401 else None

    r = wait_for(submit, what="anonSubmit to reach the read model")
    assert r.status_code == 201, r.text
    assert r.json()["verified"] is False


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", None])
def test_a_body_that_is_not_json_is_415_naming_the_type_it_got(board, content_type):
    # A form post used to be read as fields ("field 'boardSlug' is required"); the 415.
    headers = {"Content-Type": content_type} if content_type else {}
    r = board.api.post(board.path, key=board.ws.key, data=b"boardSlug=features&title=x&content=y", headers=headers)
    message = assert_error(r, 415)
    assert (content_type or "no Content-Type") in message and "application/json" in message
    post = board.post()
    r = board.api.patch(f"{board.path}/{post['id']}", key=board.ws.key, data=b'{"title": "t"}', headers={"Content-Type": "text/plain"})
    assert "text/plain" in assert_error(r, 415)
    r = board.api.post(board.path, key=board.ws.key, data=b'{"boardSlug": "features", "title": "x", "content": "y"}',
                       headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 201, r.text


def test_create_post_unknown_workspace_is_404(api):
    r = api.post(f"/workspaces/no-such-{uuid.uuid4().hex[:6]}/posts", json={"boardSlug": "a", "title": "x", "content": "y"})
    assert r.status_code == 404, r.text


def test_get_post_errors(board, other_workspace):
    post = board.post()
    assert board.get("nothex").status_code == 404
    assert board.get("0" * 24).status_code == 404
    # Another workspace's post id is unknown here.
    r = board.api.get(f"{other_workspace.path}/posts/{post['id']}", key=other_workspace.key)
    assert r.status_code == 404, r.text
    assert "error" in r.json()


def test_list_filters_sorts_and_pages(workspace):
    b = Board(workspace)
    workspace.board("bugs", "Bugs")
    first = b.post("Export to CSV")
    second = b.post("Dark mode please", board="bugs")
    third = b.post("Exporting reports as PDF")
    r = b.api.patch(f"{b.path}/{third['id']}", key=workspace.key, json={"statusSlug": "planned"})
    assert r.status_code == 200, r.text
    for i in range(2):
        assert b.vote(second["id"], user=b.user()).status_code == 201

    def ids(**params):
        r = b.api.get(b.path, params=params)
        assert r.status_code == 200, r.text
        return [p["id"] for p in r.json()["items"]]

    assert ids() == [third["id"], second["id"], first["id"]]  # newest by default
    assert ids(sort="oldest") == [first["id"], second["id"], third["id"]]
    assert ids(sort="top")[0] == second["id"]
    assert ids(board="bugs") == [second["id"]]
    assert ids(board="no-such-board") == []
    assert ids(status="planned") == [third["id"]]
    assert ids(q="export") == [third["id"], first["id"]]  # stemmed: "Exporting" matches
    assert ids(q="export csv") == [first["id"]]
    assert ids(limit=1, offset=1) == [second["id"]]
    assert ids(limit=2, offset=2) == [first["id"]]


def test_list_comments_sort_and_ties_by_id(board):
    posts = [board.post(f"Post {i}") for i in range(3)]
    r = board.api.post(f"{board.path}/{posts[0]['id']}/comments", key=board.ws.key, json={"content": "hi"})
    assert r.status_code == 201
    items = board.api.get(board.path, params={"sort": "discussed"}).json()["items"]
    assert [p["id"] for p in items] == [posts[0]["id"], posts[2]["id"], posts[1]["id"]]


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"offset": -1}, {"sort": "random"}, {"moderationState": "odd"}]
)
def test_list_refuses_bad_parameters(board, params):
    r = board.api.get(board.path, params=params)
    assert r.status_code == 400, r.text


def test_list_unknown_workspace_is_404(api):
    assert api.get("/workspaces/nope-nope-nope/posts").status_code == 404


def test_moderation_states_and_who_sees_what(board):
    author = board.user("author")
    stranger = board.user("stranger")
    post = board.post("Needs review", user=author)
    r = board.api.patch(f"{board.path}/{post['id']}", key=board.ws.key, json={"moderationState": "pending"})
    assert r.status_code == 200 and r.json()["moderationState"] == "pending"
    # Non-managers do not see it listed; its author can still open it; a stranger cannot.
    assert board.api.get(board.path, user=stranger).json()["items"] == []
    assert board.get(post["id"], user=author).status_code == 200
    assert board.get(post["id"], user=stranger).status_code == 404
    assert board.get(post["id"]).status_code == 404
    # Managers see every state and can filter.
    assert [p["id"] for p in board.api.get(board.path, key=board.ws.key).json()["items"]] == [post["id"]]
    listed = board.api.get(board.path, key=board.ws.key, params={"moderationState": "pending"}).json()["items"]
    assert [p["id"] for p in listed] == [post["id"]]
    assert board.api.get(board.path, key=board.ws.key, params={"moderationState": "spam"}).json()["items"] == []
    assert board.api.get(board.path, user=stranger, params={"moderationState": "pending"}).status_code == 403
    board.api.patch(f"{board.path}/{post['id']}", key=board.ws.key, json={"moderationState": "approved"})
    assert [p["id"] for p in board.api.get(board.path).json()["items"]] == [post["id"]]


def test_patch_changes_fields(board):
    post = board.post("Old title", "old")
    r = board.api.patch(
        f"{board.path}/{post['id']}", key=board.ws.key,
        json={"title": "New title", "content": "new **body**", "statusSlug": "in-progress", "moderationState": "approved"},
    )
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["title"], got["content"]) == ("New title", "new **body**")
    assert got["status"] == {"slug": "in-progress", "name": "In progress", "color": "#3b82f6"}
    assert board.manager_get(post["id"]) == got
    assert board.api.patch(f"{board.path}/{post['id']}", key=board.ws.key, json={}).json() == got


def test_patch_uses_a_status_created_a_moment_ago(board):
    r = board.api.post(f"{board.ws.path}/statuses", key=board.ws.key, json={"slug": "shipped", "name": "Shipped", "color": "#000000"})
    assert r.status_code == 201, r.text
    post = board.post()
    r = board.api.patch(f"{board.path}/{post['id']}", key=board.ws.key, json={"statusSlug": "shipped"})
    assert r.status_code == 200, r.text
    assert r.json()["status"]["name"] == "Shipped"


def test_patch_errors(board, other_workspace):
    post = board.post()
    path = f"{board.path}/{post['id']}"
    assert board.api.patch(path, json={"title": "x"}).status_code == 401
    assert board.api.patch(path, user=board.user(), json={"title": "x"}).status_code == 403
    assert board.api.patch(path, key=other_workspace.key, json={"title": "x"}).status_code == 403
    assert board.api.patch(f"{board.path}/{'0' * 24}", key=board.ws.key, json={"title": "x"}).status_code == 404
    for body in ({"moderationState": "maybe"}, {"title": ""}, {"votes": 3}):
        r = board.api.patch(path, key=board.ws.key, json=body)
        assert r.status_code == 400, (body, r.text)
    assert board.api.patch(path, key=board.ws.key, json={"statusSlug": "nope"}).status_code == 404  # no such status
    assert board.api.patch(path, key=board.ws.key, json={"content": "x" * 20_001}).status_code == 413


def test_a_bad_body_is_answered_with_every_problem_at_once(workspace):
    # No title, no board (neither boardSlug nor boardId) and a number for content: three fields.
    r = workspace.api.post(f"{workspace.path}/posts", key=workspace.key, json={"content": 5})
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"error", "code", "errors"}
    assert body["error"] == "field 'title' is required", "the one line is what a single problem said before"
    assert body["errors"][0] == {"field": "title", "message": "field 'title' is required", "code": "required"}
    assert sorted((e["field"], e["message"]) for e in body["errors"]) == [
        ("boardSlug", "give exactly one of 'boardSlug' or 'boardId'"),
        ("content", "field 'content' must be of type string"),
        ("title", "field 'title' is required"),
    ]
