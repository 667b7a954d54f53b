"""The vote and comment paths without client bulkWrite (servers before MongoDB 8), run in-process
against the stack's database: one command per write, same outcome."""

from bson import ObjectId

from common import auth
from common.config import load_settings
from posts_testkit import board  # noqa: F401 - a fixture


def test_votes_without_client_bulk_write(board, stack):
    from posts.plugin import create_context

    settings = load_settings({**stack.env()})
    context = create_context(settings)
    writer = context.votes.repo.writer
    writer.supported = False  # as if the server had refused bulkWrite
    post = board.post()
    slug = board.ws.slug
    users = [auth.Caller(kind=auth.USER, workspace=slug, user_id=f"sso:fallback-{i}") for i in range(3)]
    for caller in users:
        shaped, created = context.votes.vote(caller, slug, post["id"])
        assert created and shaped["voted"] is True
    shaped, created = context.votes.vote(users[0], slug, post["id"])
    assert not created and shaped["voteCount"] == 3
    assert context.votes.unvote(users[1], slug, post["id"])["voteCount"] == 2
    assert context.votes.unvote(users[1], slug, post["id"])["voteCount"] == 2  # not voted any more
    assert board.manager_get(post["id"])["voteCount"] == 2
    assert context.store.db.votes.count_documents({"countsFor": post["id"]}) == 2
    context.comments.create(users[0], slug, post["id"], {"content": "One command per write"})
    assert board.manager_get(post["id"])["commentCount"] == 1
    assert context.store.db.comments.count_documents({"postId": ObjectId(post["id"])}) == 1
    assert writer.supported is False
