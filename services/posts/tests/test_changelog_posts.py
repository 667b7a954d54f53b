"""The workspaces service validates changelog postIds against the posts service."""



def test_changelog_post_ids_must_name_posts_of_the_workspace(board, other_workspace):
    post = board.post()
    foreign = other_workspace.api.post(
        f"{other_workspace.path}/posts", key=other_workspace.key, json={"boardSlug": "x", "title": "t", "content": ""}
    )
    path = f"{board.ws.path}/changelogs"
    r = board.api.post(path, key=board.ws.key, json={"title": "v1", "slug": "v1", "content": "x", "postIds": ["0" * 24]})
    assert r.status_code == 400, r.text
    assert "0" * 24 in r.json()["error"]
    r = board.api.post(path, key=board.ws.key, json={"title": "v1", "slug": "v1", "content": "x", "postIds": ["not-an-id"]})
    assert r.status_code == 400, r.text
    r = board.api.post(path, key=board.ws.key, json={"title": "v1", "slug": "v1", "content": "x", "postIds": [post["id"]]})
    assert r.status_code == 201, r.text
    assert r.json()["postIds"] == [post["id"]]
    assert foreign.status_code in (400, 201)
    if foreign.status_code == 201:
        r = board.api.post(path, key=board.ws.key, json={"title": "v2", "slug": "v2", "content": "x", "postIds": [foreign.json()["id"]]})
        assert r.status_code == 400, r.text
