"""Daily activity (GET /posts/activity): the team's counts of posts, votes and comments a day,
every day of the period listed, oldest first; refused to everyone else."""

from datetime import datetime, timedelta, timezone

from testkit import assert_error

from .helpers import Board, anon


def activity(board: Board, **params) -> dict:
    r = board.api.get(f"{board.path}/activity", params=params, key=board.ws.key)
    assert r.status_code == 200, r.text
    return r.json()


def test_today_counts_posts_votes_and_comments(board):
    before = activity(board, days=7)
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    assert before["days"] == 7 and len(before["series"]) == 7 and before["series"][-1]["date"] == today
    assert before["since"] == (datetime.now(timezone.utc) - timedelta(days=6)).strftime("%Y-%m-%d")
    assert before["totals"] == {"posts": 0, "votes": 0, "comments": 0}
    kept = board.post("Kept")
    merged = board.post("Merged away")
    for _ in range(2):
        assert board.vote(kept["id"], user=board.user()).status_code == 201
    for private in (False, True):
        body = {"content": "a comment", **({"isPrivate": True} if private else {})}
        assert board.api.post(f"{board.path}/{kept['id']}/comments", key=board.ws.key, json=body).status_code == 201
    assert board.api.post(f"{board.path}/{merged['id']}/merge", key=board.ws.key, json={"intoPostId": kept["id"]}).status_code == 200
    after = activity(board, days=7)
    # the merged post is not counted (as the team's lists do not show it); private comments are
    assert after["series"][-1] == {"date": today, "posts": 1, "votes": 2, "comments": 2}
    assert after["totals"] == {"posts": 1, "votes": 2, "comments": 2}
    assert all(d == {"date": d["date"], "posts": 0, "votes": 0, "comments": 0} for d in after["series"][:-1])
    assert len(activity(board)["series"]) == 30  # the default period


def test_activity_is_the_teams(board, other_workspace):
    assert_error(board.api.get(f"{board.path}/activity"), 401)
    assert_error(board.api.get(f"{board.path}/activity", headers=anon()), 401)
    assert_error(board.api.get(f"{board.path}/activity", user=board.user()), 403)
    assert_error(board.api.get(f"{board.path}/activity", key=other_workspace.key), 403)
    for days in (0, 367, "x"):
        assert_error(board.api.get(f"{board.path}/activity", params={"days": days}, key=board.ws.key), 400)
