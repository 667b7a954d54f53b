"""The workspaces service validates changelog postIds against the posts service (404 for one
it does not have, as for any body naming what is not there)."""

from .helpers import Board


def test_changelog_post_ids_must_name_posts_of_the_workspace(board, other_workspace):
    post = board.post()
    foreign = Board(other_workspace).post()  # a real post, of another workspace
    path = f"{board.ws.path}/changelogs"
    r = board.api.post(path, key=board.ws.key, json={"title": "v1", "slug": "v1", "content": "x", "postIds": ["0" * 24]})
    assert r.status_code == 404, r.text
    assert "0" * 24 in r.json()["error"]
    r = board.api.post(path, key=board.ws.key, json={"title": "v1", "slug": "v1", "content": "x", "postIds": ["not-an-id"]})
    assert r.status_code == 404, r.text
    r = board.api.post(path, key=board.ws.key, json={"title": "v1", "slug": "v1", "content": "x", "postIds": [post["id"]]})
    assert r.status_code == 201, r.text
    assert r.json()["postIds"] == [post["id"]]
    # The other workspace's post exists, and is refused all the same: it is not this workspace's.
    r = board.api.post(path, key=board.ws.key, json={"title": "v2", "slug": "v2", "content": "x", "postIds": [foreign["id"], post["id"]]})
    assert r.status_code == 404, r.text
    assert foreign["id"] in r.json()["error"] and post["id"] not in r.json()["error"]
    r = other_workspace.api.post(f"{other_workspace.path}/changelogs", key=other_workspace.key,
                                 json={"title": "v2", "slug": "v2", "content": "x", "postIds": [foreign["id"]]})
    assert r.status_code == 201, r.text  # in its own workspace, the same id is taken
