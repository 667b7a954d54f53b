"""Comments: threads, private comments, and that they never leak, through the gateway."""



from testkit import wait_for
from .helpers import anon


def comment(board, post_id, content="Nice", **kw):
    body = {"content": content, **{k: v for k, v in kw.items() if k in ("parentId", "isPrivate")}}
    auth = {k: v for k, v in kw.items() if k in ("key", "user", "headers")}
    return board.api.post(f"{board.path}/{post_id}/comments", json=body, **auth)


def test_comment_shape_and_thread_order(board):
    post = board.post()
    user = board.user()
    a = comment(board, post["id"], "first", user=user)
    assert a.status_code == 201, a.text
    a = a.json()
    assert set(a) == {"id", "postId", "parentId", "content", "isTeamMember", "authorName", "author", "isPrivate", "createdAt",
                      "editedAt", "deleted", "mine", "editableUntil"}
    assert (a["postId"], a["parentId"], a["isTeamMember"], a["authorName"], a["isPrivate"]) == (post["id"], None, False, None, False)
    b = comment(board, post["id"], "second", user=user).json()
    a1 = comment(board, post["id"], "reply to first", key=board.ws.key, parentId=a["id"]).json()
    assert a1["isTeamMember"] is True and a1["parentId"] == a["id"] and a1["authorName"] is None  # a key signs nothing
    a11 = comment(board, post["id"], "reply to reply", user=user, parentId=a1["id"]).json()
    items = board.api.get(f"{board.path}/{post['id']}/comments", user=user).json()["items"]
    assert [c["id"] for c in items] == [a["id"], a1["id"], a11["id"], b["id"]]
    assert board.get(post["id"]).json()["commentCount"] == 4


def test_comment_errors(board, other_workspace):
    post = board.post()
    other = board.post("Other")
    user = board.user()
    parent = comment(board, other["id"], user=user).json()
    cases = [
        (comment(board, post["id"], "", user=user), 400),
        (board.api.post(f"{board.path}/{post['id']}/comments", user=user, json={}), 400),
        (comment(board, post["id"], "x", user=user, parentId=parent["id"]), 404),  # parent on another post
        (comment(board, post["id"], "x", user=user, parentId="0" * 24), 404),
        (comment(board, post["id"], "x", headers=anon()), 401),
        (comment(board, post["id"], "x", user=user, isPrivate=True), 403),
        (comment(board, "0" * 24, "x", user=user), 404),
        (board.api.post(f"{other_workspace.path}/posts/{post['id']}/comments", key=other_workspace.key, json={"content": "x"}), 404),
        (comment(board, post["id"], "x" * 10_001, user=user), 413),
    ]
    for r, status in cases:
        assert r.status_code == status, (status, r.text)
        assert r.json()["error"]
    r = board.api.get(f"{board.path}/{'0' * 24}/comments")
    assert r.status_code == 404
    assert board.api.get(f"{board.path}/{post['id']}/comments", params={"limit": 0}).status_code == 400


def test_anonymous_comments_follow_anon_comment(board):
    post = board.post()
    board.ws.settings(anonComment=True)
    r = wait_for(lambda: (lambda r: r if r.status_code != 401 else None)(comment(board, post["id"], "hi", headers=anon())), what="anonComment")
    assert r.status_code == 201 and r.json()["isTeamMember"] is False


SECRET = "internal note: customer is Globex, churn risk"


def test_private_comments_never_leak(board):
    board.ws.settings(anonSubmit=True, anonVote=True, anonComment=True)
    post = board.post("Dark mode please")
    public = comment(board, post["id"], "public words", key=board.ws.key).json()
    private = comment(board, post["id"], SECRET, key=board.ws.key, isPrivate=True)
    assert private.status_code == 201, private.text
    private = private.json()
    assert private["isPrivate"] is True
    reply = comment(board, post["id"], "reply in private thread", key=board.ws.key, parentId=private["id"]).json()
    assert reply["isPrivate"] is True  # a reply to a private comment stays private
    user = board.user()
    for who in ({"user": user}, {"headers": anon()}):
        views = [
            board.api.get(board.path, **who),
            board.api.get(f"{board.path}/{post['id']}", **who),
            board.api.get(f"{board.path}/{post['id']}/comments", **who),
            board.api.get(f"{board.path}/search", params={"q": "dark mode"}, **who),
            board.api.get(f"{board.ws.path}/roadmap", **who),
        ]
        for r in views:
            assert r.status_code == 200, r.text
            assert SECRET not in r.text and "private thread" not in r.text
            assert private["id"] not in r.text
        assert views[1].json()["commentCount"] == 1
        assert [c["id"] for c in views[2].json()["items"]] == [public["id"]]
        # Replying to a private comment is refused as if it did not exist.
        r = comment(board, post["id"], "x", parentId=private["id"], **who)
        assert r.status_code == 404 and SECRET not in r.text
    # Managers see everything, and count it.
    manager_view = board.api.get(f"{board.path}/{post['id']}/comments", key=board.ws.key).json()["items"]
    assert [c["id"] for c in manager_view] == [public["id"], private["id"], reply["id"]]
    assert board.manager_get(post["id"])["commentCount"] == 3
