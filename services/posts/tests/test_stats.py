"""Board statistics (GET /posts/stats): visibility as lists, stalled posts from public comments
only, a fixed number of database commands whatever the board's size, and the backfill of posts
written before posts kept their last public comment."""

import os
import time
import uuid

import pytest
import requests

from common import auth
from posts import contract
from posts.repository import LAST_COMMENTS_BACKFILLED
from testkit import assert_error

from .helpers import Board, anon, manager


# -- through the gateway ------------------------------------------------------------------------


def read_key(board: Board) -> str:
    r = board.api.post(f"{board.ws.path}/api-keys", key=board.ws.key, json={"name": "stats-reader", "role": "read"})
    assert r.status_code == 201, r.text
    return r.json()["key"]


def stats(on: Board, **kw) -> dict:
    query = {k: kw.pop(k) for k in ("board", "stalledDays", "top") if k in kw}
    r = on.api.get(f"{on.path}/stats", params=query, **kw)
    assert r.status_code == 200, r.text
    return r.json()


def comment(board: Board, post_id: str, private: bool = False, **kw) -> dict:
    body = {"content": "a comment", **({"isPrivate": True} if private else {})}
    r = board.api.post(f"{board.path}/{post_id}/comments", json=body, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def ids(items: list[dict]) -> list[str]:
    return [p["id"] for p in items]


def test_stats_count_what_lists_show(stack, board):
    """A pending post and a merged one are not counted for a read key, an end user or an
    anonymous visitor; a manager counts the pending one (as manager lists show it), never the
    merged one."""
    user = board.user()
    shown = board.post("Shown", user=user)
    pending = board.post("Pending")
    merged = board.post("Merged away")
    board.ws.board("bugs", "Bugs")
    elsewhere = board.post("On another board", board="bugs")
    assert board.api.patch(f"{board.path}/{pending['id']}", key=board.ws.key, json={"moderationState": "pending"}).status_code == 200
    assert board.api.patch(f"{board.path}/{shown['id']}", key=board.ws.key, json={"statusSlug": "planned"}).status_code == 200
    assert board.api.post(f"{board.path}/{merged['id']}/merge", key=board.ws.key, json={"intoPostId": shown["id"]}).status_code == 200
    assert board.vote(elsewhere["id"], user=user).status_code == 201
    comment(board, shown["id"], private=True, key=board.ws.key)
    reader = read_key(board)

    for who in ({"key": reader}, {"user": board.user()}, {"headers": anon()}):
        seen = stats(board, **who)
        assert seen["postsCounted"] == 2 and seen["byStatus"] == {"open": 1, "planned": 1}, who
        assert ids(seen["topVoted"]) == [elsewhere["id"], shown["id"]] and ids(seen["newest"]) == [elsewhere["id"], shown["id"]]
        # Its author's vote (authorVotes); the private comment is the team's.
        assert seen["topVoted"][1] == {"id": shown["id"], "title": "Shown", "status": "planned", "voteCount": 1,
                                       "commentCount": 0, "createdAt": shown["createdAt"]}
        on_board = stats(board, board="features", **who)
        assert on_board["postsCounted"] == 1 and ids(on_board["newest"]) == [shown["id"]] and on_board["board"] == "features"

    managed = stats(board, key=board.ws.key, top=1)
    assert managed["postsCounted"] == 3 and managed["byStatus"] == {"open": 2, "planned": 1}
    assert ids(managed["newest"]) == [elsewhere["id"]] and ids(managed["topVoted"]) == [elsewhere["id"]]
    assert next(p for p in stats(board, key=board.ws.key)["newest"] if p["id"] == shown["id"])["commentCount"] == 1
    assert stats(board, board="nope", key=reader)["postsCounted"] == 0  # as lists: an unknown board has no posts


def test_stalled_posts_follow_public_comments_only(stack, board):
    """Stalled: a non-team member spoke last in public. A team reply un-stalls the post, a
    private note changes nothing for anyone, and a customer's next comment stalls it again."""
    customer = board.user()
    waiting = board.post("Waiting")
    noted = board.post("Only a private note after the customer")
    answered = board.post("Answered")
    private_only = board.post("Only private notes")
    comment(board, waiting["id"], user=customer)
    comment(board, noted["id"], user=customer)
    comment(board, noted["id"], private=True, key=board.ws.key)
    comment(board, answered["id"], user=customer)
    comment(board, answered["id"], key=board.ws.key)
    comment(board, private_only["id"], private=True, key=board.ws.key)
    reader = read_key(board)

    for who in ({"key": reader}, {"key": board.ws.key}, {"headers": anon()}):
        seen = stats(board, stalledDays=0, **who)
        assert ids(seen["stalled"]) == [waiting["id"], noted["id"]], who  # longest waiting first
        assert seen["stalled"][0]["daysWaiting"] == 0 and seen["stalled"][0]["lastCommentAt"] and not seen["moreStalled"]
        assert stats(board, stalledDays=30, **who)["stalled"] == []  # nobody has waited 30 days

    comment(board, waiting["id"], key=board.ws.key)  # the team answers
    assert ids(stats(board, stalledDays=0, key=reader)["stalled"]) == [noted["id"]]
    comment(board, answered["id"], user=board.user())  # a customer comes back
    assert ids(stats(board, stalledDays=0, key=reader)["stalled"]) == [noted["id"], answered["id"]]


def test_bad_parameters_are_400(stack, board):
    for query in ({"stalledDays": -1}, {"stalledDays": 3651}, {"stalledDays": "soon"}, {"top": 0}, {"top": 51}, {"top": "x"}):
        message = assert_error(board.api.get(f"{board.path}/stats", params=query, key=board.ws.key), 400)
        assert next(iter(query)) in message


def signed_get(stack, slug: str, caller: auth.Caller, query: str) -> tuple[int, str]:
    """One direct, signed call of the posts API: its database commands (as the round-trip
    budgets read them, tests/test_round_trips.py)."""
    path = f"/v1/workspaces/{slug}/posts/stats"
    headers = auth.signed_headers(stack.internal_secret, "posts", "GET", path, query, None, caller)
    r = requests.get(stack.service_url("posts") + path + "?" + query, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    return int(r.headers["X-Db-Round-Trips"]), r.headers["X-Db-Commands"]


def test_database_commands_do_not_grow_with_the_board(stack, board):
    """5 posts or 60, each commented by a customer: the same commands (an aggregation and one
    index range), for a manager and for everyone else."""
    callers = [auth.Caller(kind=auth.MANAGER, workspace=board.ws.slug, key_id="k"),
               auth.Caller(kind=auth.USER, workspace=board.ws.slug, user_id="sso:stats")]
    query = "stalledDays=0&top=5&board=features"
    customer = board.user()

    def grow_to(n: int) -> None:
        while len(made) < n:
            made.append(board.post(f"Post {len(made)}"))
            comment(board, made[-1]["id"], user=customer)

    def commands() -> list[tuple[int, str]]:
        # A process's first request for a workspace may read its snapshot once: the steady
        # state is the best of three, as the round-trip budgets take it.
        return [min(signed_get(stack, board.ws.slug, caller, query) for _ in range(3)) for caller in callers]

    made: list[dict] = []
    grow_to(5)
    small = commands()
    grow_to(60)
    large = commands()
    assert large == small, (small, large)
    assert all(trips == 2 and names == "aggregate.posts,find.posts" for trips, names in large), large
    seen = stats(board, stalledDays=0, key=board.ws.key)
    assert seen["postsCounted"] == 60 and len(seen["stalled"]) == contract.STALLED_MAX and seen["moreStalled"]


# -- in process: the comment write, the backfill ------------------------------------------------


def user(slug: str) -> auth.Caller:
    return auth.Caller(kind=auth.USER, workspace=slug, user_id=f"sso:{uuid.uuid4().hex[:8]}")


def new_post(context, slug: str, title: str) -> str:
    return context.service.create(manager(slug), slug, {"boardSlug": "features", "title": title, "content": "x"})["id"]


def stalled_ids(context, slug: str) -> list[str]:
    time.sleep(0.002)  # past the last comment's millisecond: stalledDays=0 means "before now"
    return ids(context.board.stats(manager(slug), slug, None, 0, 5)["stalled"])


def test_a_comment_committed_late_does_not_replace_a_later_one(context, slug):
    """A retried comment transaction may commit after a later comment's: the later one stays
    the post's last (here the later comment is the team's, stored first)."""
    from bson import ObjectId

    post = new_post(context, slug, "Raced")
    context.service.comment(manager(slug), slug, post, {"content": "the team, later"})
    stored = context.service.repo.posts.find_one({"_id": ObjectId(post)})
    context.service.repo.posts.update_one({"_id": stored["_id"]}, {"$set": {"lastCommentAt": stored["lastCommentAt"].replace(year=2999)}})
    context.service.comment(user(slug), slug, post, {"content": "a customer, earlier"})
    after = context.service.repo.posts.find_one({"_id": stored["_id"]})
    assert after["lastCommentByTeam"] is True and after["lastCommentAt"].year == 2999
    assert after["commentCount"] == 2


def test_posts_written_before_get_their_last_comment_from_the_backfill(context, slug):
    """Posts commented before posts kept their last public comment are found stalled once the
    backfill (run by each API process at start, once per database) has given it to them; a
    post a new comment reached first keeps what that comment set."""
    repo = context.service.repo
    waiting, answered, noted, fresh = (new_post(context, slug, t) for t in ("Waiting", "Answered", "Noted", "Fresh"))
    context.service.comment(user(slug), slug, waiting, {"content": "hello?"})
    context.service.comment(user(slug), slug, answered, {"content": "hello?"})
    context.service.comment(manager(slug), slug, answered, {"content": "on it"})
    context.service.comment(user(slug), slug, noted, {"content": "hello?"})
    context.service.comment(manager(slug), slug, noted, {"content": "note to self", "isPrivate": True})
    # As stored before this change: no last public comment on any post.
    repo.posts.update_many({"workspace": slug}, {"$unset": {"lastCommentAt": "", "lastCommentByTeam": ""}})
    assert stalled_ids(context, slug) == []
    context.service.comment(manager(slug), slug, fresh, {"content": "first word"})  # after the change
    context.service.comment(user(slug), slug, fresh, {"content": "a reply"})

    repo.posts.delete_one({"_id": LAST_COMMENTS_BACKFILLED})
    context.board.backfill_last_comments()
    assert repo.last_comments_backfilled()
    assert stalled_ids(context, slug) == [waiting, noted, fresh]
    context.service.comment(manager(slug), slug, waiting, {"content": "answered"})
    assert stalled_ids(context, slug) == [noted, fresh]


# -- on real MongoDB: the stalled posts' read walks its index ----------------------------------


@pytest.mark.skipif(not os.environ.get("MONGODB_URI"), reason="needs a real MongoDB (set MONGODB_URI)")
def test_stalled_posts_are_an_index_range(context, slug):
    from datetime import datetime, timezone

    from .helpers import winning

    repo = context.service.repo
    for listed_only in (True, False):
        query = {**repo._seen_by(slug, listed_only, None), "lastCommentByTeam": False, "lastCommentAt": {"$lt": datetime.now(timezone.utc)}}
        plan = winning(repo.posts.find(query, sort=[("lastCommentAt", 1), ("_id", 1)], limit=51))
        assert "IXSCAN" in plan and "COLLSCAN" not in plan and "SORT" not in plan, plan
