"""Deleting and editing posts and comments: who may (the author within the window, the team
always; the team never rewrites another's comment), that a deletion is soft and hides the post
everywhere, that a deleted comment keeps its replies, and the events and audit entries."""

from datetime import timedelta

import pytest
from bson import ObjectId

from common.ids import iso, now
from common.errors import Conflict, Forbidden, NotFound, Unauthorized
from posts.board import ListQuery
from testkit import wait_for

from .helpers import manager, published, user
from .test_service import ANONYMOUS


def comment(board, post_id, content="Nice", **kw):
    body = {"content": content, **({"parentId": kw.pop("parentId")} if "parentId" in kw else {})}
    r = board.api.post(f"{board.path}/{post_id}/comments", json=body, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def comments(board, post_id, **kw) -> list[dict]:
    r = board.api.get(f"{board.path}/{post_id}/comments", **kw)
    assert r.status_code == 200, r.text
    return r.json()["items"]


# -- through the platform ------------------------------------------------------------------------


def test_the_author_edits_title_and_content_and_only_those(board):
    author, other = board.user(), board.user()
    post = board.post("Dark mode", "please", user=author)
    assert post["mine"] is True and post["editedAt"] is None and post["editableUntil"] > post["createdAt"]
    assert board.get(post["id"], user=other).json()["mine"] is False
    assert board.get(post["id"]).json()["editableUntil"] is None  # anonymous: nobody's window

    path = f"{board.path}/{post['id']}"
    r = board.api.patch(path, user=author, json={"title": "Dark mode, please", "content": "for the night"})
    assert r.status_code == 200, r.text
    edited = r.json()
    assert (edited["title"], edited["content"]) == ("Dark mode, please", "for the night") and edited["editedAt"]
    for body in ({"statusSlug": "planned"}, {"title": "x", "moderationState": "approved"}, {"tags": []}):
        r = board.api.patch(path, user=author, json=body)
        assert r.status_code == 403 and "only the team" in r.json()["error"], (body, r.text)
    assert board.api.patch(path, user=other, json={"title": "Mine now"}).status_code == 403
    assert board.api.patch(path, json={"title": "Anon"}).status_code == 401
    assert board.get(post["id"]).json()["title"] == "Dark mode, please"
    # The team keeps every right it had.
    r = board.api.patch(path, key=board.ws.key, json={"statusSlug": "planned", "title": "Dark theme"})
    assert r.status_code == 200 and r.json()["status"]["slug"] == "planned" and r.json()["mine"] is False


def test_a_deleted_post_is_gone_everywhere(board, stack):
    ws, author = board.ws, board.user()
    post = board.post("Offline sync for tablets", "sync everything", user=author)
    keep = board.post("Offline maps", "maps")
    path = f"{board.path}/{post['id']}"
    assert board.api.delete(path, user=board.user()).status_code == 403  # someone else
    assert board.api.delete(path).status_code == 401
    assert [p["id"] for p in board.api.get(f"{ws.path}/posts/search", params={"q": "offline"}).json()["items"]]

    r = board.api.delete(path, user=author)
    assert r.status_code == 204, r.text
    for creds in ({}, {"user": author}, {"key": ws.key}):
        assert board.get(post["id"], **creds).status_code == 404
        listed = board.api.get(f"{ws.path}/posts", params={"limit": 100}, **creds).json()["items"]
        assert [p["id"] for p in listed] == [keep["id"]]
        found = board.api.get(f"{ws.path}/posts/search", params={"q": "offline sync"}, **creds).json()["items"]
        assert post["id"] not in [p["id"] for p in found]
        roadmap = board.api.get(f"{ws.path}/roadmap", **creds).json()["columns"]
        assert post["id"] not in [i["id"] for c in roadmap for i in c["items"]]
        stats = board.api.get(f"{ws.path}/posts/stats", **creds).json()
        assert stats["postsCounted"] == 1 and post["id"] not in str(stats), stats
    # Gone: nothing more to do with it, for anyone.
    assert board.api.delete(path, key=ws.key).status_code == 404
    assert board.vote(post["id"], user=author).status_code == 404
    assert board.api.post(f"{path}/comments", user=author, json={"content": "hello?"}).status_code == 404
    assert board.api.patch(path, key=ws.key, json={"title": "Back"}).status_code == 404

    events = published(stack, ws.slug, {"post.deleted"})
    (deleted,) = events["post.deleted"]
    assert deleted["post"] == {"id": post["id"], "title": "Offline sync for tablets", "boardId": post["boardId"]}
    assert deleted["byAuthor"] is True and "content" not in str(deleted)

    def audited():
        items = board.api.get(f"{ws.path}/audit-log", key=ws.key).json()["items"]
        return [e for e in items if e["type"] == "post.deleted"]

    (entry,) = wait_for(audited, timeout=30, what="the deletion in the audit log")
    assert entry["data"]["post"]["id"] == post["id"] and entry["data"]["byAuthor"] is True


def test_the_team_deletes_any_post_but_not_a_merged_one(board):
    ws = board.ws
    a, b, c = board.post("A", user=board.user()), board.post("B"), board.post("C")
    assert board.api.post(f"{board.path}/{b['id']}/merge", key=ws.key, json={"intoPostId": c["id"]}).status_code == 200
    for merged in (b, c):  # merged into another, or with a post merged into it
        r = board.api.delete(f"{board.path}/{merged['id']}", key=ws.key)
        assert r.status_code == 409 and "unmerge" in r.json()["error"], r.text
    assert board.api.delete(f"{board.path}/{a['id']}", key=ws.key).status_code == 204
    assert board.api.delete(f"{board.path}/{'0' * 24}", key=ws.key).status_code == 404


def test_comments_edit_and_delete_keeping_replies(board, stack):
    ws, author, replier = board.ws, board.user(), board.user()
    post = board.post()
    first = comment(board, post["id"], "first thought", user=author)
    assert first["mine"] is True and first["deleted"] is False and first["editedAt"] is None
    reply = comment(board, post["id"], "a reply", user=replier, parentId=first["id"])
    lone = comment(board, post["id"], "lone words", user=author)
    team = comment(board, post["id"], "from the team", key=ws.key)
    cpath = f"{board.path}/{post['id']}/comments"
    assert board.get(post["id"]).json()["commentCount"] == 4

    r = board.api.patch(f"{cpath}/{first['id']}", user=author, json={"content": "second thought"})
    assert r.status_code == 200 and r.json()["content"] == "second thought" and r.json()["editedAt"], r.text
    # Nobody rewrites another's words: not the team, not another user; anonymous callers sign in first.
    assert board.api.patch(f"{cpath}/{first['id']}", key=ws.key, json={"content": "team words"}).status_code == 403
    assert board.api.patch(f"{cpath}/{first['id']}", user=replier, json={"content": "x"}).status_code == 403
    assert board.api.patch(f"{cpath}/{first['id']}", json={"content": "x"}).status_code == 401
    assert board.api.patch(f"{cpath}/{first['id']}", user=author, json={"content": ""}).status_code == 400
    assert board.api.delete(f"{cpath}/{team['id']}", user=author).status_code == 403
    assert board.api.delete(f"{cpath}/{first['id']}", user=replier).status_code == 403
    assert board.api.patch(f"{board.path}/{'0' * 24}/comments/{first['id']}", user=author, json={"content": "x"}).status_code == 404

    assert board.api.delete(f"{cpath}/{first['id']}", key=ws.key).status_code == 204  # the team, of a user's comment
    assert board.api.delete(f"{cpath}/{lone['id']}", user=author).status_code == 204  # its author
    assert board.api.delete(f"{cpath}/{lone['id']}", user=author).status_code == 404
    items = comments(board, post["id"], user=author)
    assert [c["id"] for c in items] == [first["id"], reply["id"], team["id"]]  # the lone one is gone, the thread kept
    gone = items[0]
    assert gone["deleted"] is True and gone["content"] == "" and gone["mine"] is False and gone["authorName"] is None
    assert items[1]["content"] == "a reply" and items[1]["parentId"] == first["id"]
    assert board.get(post["id"]).json()["commentCount"] == 2
    # No reply to what is gone; once its last reply goes, the deleted comment goes too.
    r = board.api.post(cpath, user=replier, json={"content": "x", "parentId": first["id"]})
    assert r.status_code == 404
    assert board.api.delete(f"{cpath}/{reply['id']}", key=ws.key).status_code == 204
    assert [c["id"] for c in comments(board, post["id"])] == [team["id"]]

    events = published(stack, ws.slug, {"comment.deleted", "comment.edited"})
    edited = events["comment.edited"][0]
    assert edited["comment"]["content"] == "second thought"
    by_id = {e["comment"]["id"]: e for e in events.get("comment.deleted", [])}
    assert by_id[first["id"]]["byAuthor"] is False and by_id[lone["id"]]["byAuthor"] is True
    assert all("content" not in e["comment"] for e in by_id.values())


def test_private_comments_stay_the_teams(board):
    post = board.post()
    private = board.api.post(f"{board.path}/{post['id']}/comments", key=board.ws.key, json={"content": "hush", "isPrivate": True}).json()
    path = f"{board.path}/{post['id']}/comments/{private['id']}"
    assert board.api.delete(path, user=board.user()).status_code == 404  # not shown to exist
    assert board.api.delete(path, key=board.ws.key).status_code == 204
    assert board.manager_get(post["id"])["commentCount"] == 0


# -- in process: the window -----------------------------------------------------------------------


def _age(context, collection: str, doc_id: str, minutes: int) -> None:
    """Make a post or comment written ``minutes`` earlier than it was."""
    coll = getattr(context.service.repo, collection)
    written = coll.find_one({"_id": ObjectId(doc_id)})["createdAt"]
    coll.update_one({"_id": ObjectId(doc_id)}, {"$set": {"createdAt": written - timedelta(minutes=minutes)}})


def test_the_authors_window_closes_and_the_teams_never_does(context, slug):
    author = user(slug)
    create = {"boardSlug": "features", "title": "Late", "content": "x"}
    post = context.service.create(author, slug, create)
    second = context.service.create(author, slug, {**create, "title": "Later"})
    note = context.service.comment(author, slug, post["id"], {"content": "mine"})
    window = context.config.author_window
    assert window == 15 * 60
    for doc_id, collection in ((post["id"], "posts"), (second["id"], "posts"), (note["id"], "comments")):
        _age(context, collection, doc_id, 16)
    for attempt in (lambda: context.service.update(author, slug, post["id"], {"title": "Too late"}),
                    lambda: context.service.delete(author, slug, post["id"]),
                    lambda: context.service.edit_comment(author, slug, post["id"], note["id"], {"content": "too late"}),
                    lambda: context.service.delete_comment(author, slug, post["id"], note["id"])):
        with pytest.raises(Forbidden, match="15 minutes"):
            attempt()
    seen = context.service.get(author, slug, post["id"])
    assert seen["mine"] is True and seen["editableUntil"] < iso(now())
    with pytest.raises(Unauthorized):
        context.service.delete(ANONYMOUS, slug, post["id"])
    # The team: a deletion any time; its title edit too (editedAt), but never another's comment.
    with pytest.raises(Forbidden):
        context.service.edit_comment(manager(slug), slug, post["id"], note["id"], {"content": "rewritten"})
    assert context.service.update(manager(slug), slug, second["id"], {"title": "Retitled"})["editedAt"]
    context.service.delete_comment(manager(slug), slug, post["id"], note["id"])
    context.service.delete(manager(slug), slug, post["id"])
    with pytest.raises(NotFound):
        context.service.get(manager(slug), slug, post["id"])
    listed = context.board.list(manager(slug), slug, ListQuery())["items"]
    assert [p["id"] for p in listed] == [second["id"]]
    stored = context.service.repo.posts.find_one({"_id": ObjectId(post["id"])})
    assert stored["deletedAt"] and stored["deletedBy"]["id"] == "key:k1" and stored["listed"] is False  # soft: kept, marked
    with pytest.raises(Conflict):
        other = context.service.create(manager(slug), slug, {**create, "title": "Into"})
        context.merges.merge(manager(slug), slug, second["id"], {"intoPostId": other["id"]})
        context.service.delete(manager(slug), slug, other["id"])


def test_last_public_comment_follows_a_deletion(context, slug):
    post = context.service.create(manager(slug), slug, {"boardSlug": "features", "title": "Stats", "content": "x"})
    someone = user(slug)
    early = context.service.comment(manager(slug), slug, post["id"], {"content": "team"})
    late = context.service.comment(someone, slug, post["id"], {"content": "customer"})
    posts = context.service.repo.posts
    assert posts.find_one({"_id": ObjectId(post["id"])})["lastCommentByTeam"] is False
    context.service.delete_comment(someone, slug, post["id"], late["id"])
    doc = posts.find_one({"_id": ObjectId(post["id"])})
    assert doc["lastCommentByTeam"] is True and doc["commentCount"] == 1
    context.service.delete_comment(manager(slug), slug, post["id"], early["id"])
    doc = posts.find_one({"_id": ObjectId(post["id"])})
    assert "lastCommentAt" not in doc and doc["commentCount"] == 0
