"""Merge into a canonical post and undo it exactly, through the gateway."""

from testkit import wait_for
from .helpers import Board, anon


def merge(board, a, b, key=None, **kw):
    return board.api.post(f"{board.path}/{a}/merge", key=key or board.ws.key, json={"intoPostId": b}, **kw)


def unmerge(board, a, key=None, **kw):
    return board.api.post(f"{board.path}/{a}/unmerge", key=key or board.ws.key, **kw)


def test_merge_moves_votes_without_double_counting_and_unmerge_restores(board):
    a, b = board.post("Dark mode"), board.post("Night theme")
    both, only_a, only_b = board.user("both"), board.user("only-a"), board.user("only-b")
    for token, post in ((both, a), (both, b), (only_a, a), (only_b, b)):
        assert board.vote(post["id"], user=token).status_code == 201
    r = board.api.post(f"{board.path}/{a['id']}/comments", user=only_a, json={"content": "me too"})
    assert r.status_code == 201
    before = {p: {u: board.get(p, user=u).json() for u in (both, only_a, only_b)} for p in (a["id"], b["id"])}

    r = merge(board, a["id"], b["id"])
    assert r.status_code == 200, r.text
    merged = r.json()
    assert merged["id"] == a["id"] and merged["mergedInto"] == {"id": b["id"], "title": "Night theme"}
    canonical = board.get(b["id"], user=only_a).json()
    assert canonical["voteCount"] == 3  # both, only-a, only-b: nobody twice
    assert canonical["voted"] is True  # only-a's vote moved here
    assert canonical["mergedPosts"] == [{"id": a["id"], "title": "Dark mode", "voteCount": 2}]
    assert canonical["commentCount"] == 0  # comments stay on their post
    assert [p["id"] for p in board.api.get(board.path).json()["items"]] == [b["id"]]  # merged posts are not listed
    # Voting on the canonical post by someone whose vote moved changes nothing.
    assert board.vote(b["id"], user=only_a).json()["voteCount"] == 3
    assert board.vote(a["id"], user=board.user()).status_code == 409  # vote on the canonical post instead

    r = unmerge(board, a["id"])
    assert r.status_code == 200, r.text
    after = {p: {u: board.get(p, user=u).json() for u in (both, only_a, only_b)} for p in (a["id"], b["id"])}
    assert after == before
    assert sorted(p["id"] for p in board.api.get(board.path).json()["items"]) == sorted([a["id"], b["id"]])


def test_merge_round_trips_repeat(board):
    a, b = board.post("A"), board.post("B")
    voters = [board.user() for _ in range(4)]
    for t in voters[:3]:
        board.vote(a["id"], user=t)
    for t in voters[1:]:
        board.vote(b["id"], user=t)
    original = (board.manager_get(a["id"]), board.manager_get(b["id"]))
    for _ in range(3):
        assert merge(board, a["id"], b["id"]).status_code == 200
        assert board.manager_get(b["id"])["voteCount"] == 4
        assert unmerge(board, a["id"]).status_code == 200
        assert (board.manager_get(a["id"]), board.manager_get(b["id"])) == original


def test_unvote_on_canonical_removes_the_voter_from_the_group(board):
    a, b = board.post("A"), board.post("B")
    u = board.user()
    board.vote(a["id"], user=u)
    board.vote(b["id"], user=u)
    merge(board, a["id"], b["id"])
    r = board.api.delete(f"{board.path}/{b['id']}/vote", user=u)
    assert r.status_code == 200 and r.json()["voteCount"] == 0 and r.json()["voted"] is False
    unmerge(board, a["id"])
    assert board.manager_get(a["id"])["voteCount"] == 0
    assert board.manager_get(b["id"])["voteCount"] == 0


def test_merge_errors(workspace, other_workspace):
    board = Board(workspace)
    a, b, c = board.post("A"), board.post("B"), board.post("C")
    foreign = Board(other_workspace).post("Foreign")
    user = board.user()
    path = f"{board.path}/{a['id']}/merge"
    assert board.api.post(path, json={"intoPostId": b["id"]}).status_code == 401
    assert board.api.post(path, user=user, json={"intoPostId": b["id"]}).status_code == 403
    assert board.api.post(path, key=other_workspace.key, json={"intoPostId": b["id"]}).status_code == 403
    assert board.api.post(path, key=workspace.key, json={}).status_code == 400
    assert merge(board, a["id"], a["id"]).status_code == 400
    assert merge(board, a["id"], "0" * 24).status_code == 404
    assert merge(board, a["id"], foreign["id"]).status_code == 404  # another workspace's post
    assert merge(board, "0" * 24, b["id"]).status_code == 404
    assert merge(board, a["id"], b["id"]).status_code == 200
    assert merge(board, a["id"], c["id"]).status_code == 409  # already merged
    assert merge(board, c["id"], a["id"]).status_code == 409  # into a merged post
    assert merge(board, b["id"], c["id"]).status_code == 409  # has posts merged into it
    for r in (merge(board, a["id"], c["id"]), merge(board, c["id"], a["id"])):
        assert r.json()["error"]


def test_unmerge_errors(board, other_workspace):
    a, b = board.post("A"), board.post("B")
    merge(board, a["id"], b["id"])
    path = f"{board.path}/{a['id']}/unmerge"
    assert board.api.post(path).status_code == 401
    assert board.api.post(path, user=board.user()).status_code == 403
    assert board.api.post(path, key=other_workspace.key).status_code == 403
    assert unmerge(board, "0" * 24).status_code == 404
    assert unmerge(board, b["id"]).status_code == 409  # not merged
    assert unmerge(board, a["id"]).status_code == 200
    assert unmerge(board, a["id"]).status_code == 409


def test_a_merged_post_is_closed_to_every_kind_of_vote(board):
    """Issue 36 ("a merged post stays open and votable"): every way of voting on a merged post is
    409 naming the post it was merged into, and changes no count; the merged post is not listed."""
    a, b = board.post("Export to CSV"), board.post("CSV export")
    moved = board.user("moved")
    assert board.vote(a["id"], user=moved).status_code == 201
    assert merge(board, a["id"], b["id"]).status_code == 200
    board.ws.settings(anonVote=True)
    r = board.api.post(f"{board.ws.path}/api-keys", key=board.ws.key, json={"name": "helpdesk", "role": "write"})
    assert r.status_code == 201, r.text
    helpdesk = r.json()["key"]
    votes = f"{board.path}/{a['id']}/votes"
    attempts = {
        "a signed-in user": lambda: board.vote(a["id"], user=board.user()),
        "a user whose vote moved with the merge": lambda: board.vote(a["id"], user=moved),
        "a manager key": lambda: board.vote(a["id"], key=board.ws.key),
        "a write key": lambda: board.vote(a["id"], key=helpdesk),
        "an anonymous visitor": lambda: board.vote(a["id"], headers=anon()),
        "the team, for someone": lambda: board.api.post(votes, key=board.ws.key, json={"userId": "sso:someone"}),
        "the team, for an address": lambda: board.api.post(votes, key=board.ws.key, json={"email": "buyer@example.com"}),
        "a write key, for someone": lambda: board.api.post(votes, key=helpdesk, json={"userId": "sso:someone-else"}),
    }
    for who, attempt in attempts.items():
        # (A response of 4xx is falsy: wait for a list holding it. 401: anonVote not seen yet.)
        [r] = wait_for(lambda: (lambda r: [r] if r.status_code != 401 else None)(attempt()), what=f"{who}'s answer")
        assert r.status_code == 409, f"{who}: {r.status_code} {r.text}"
        assert b["id"] in r.json()["error"], f"{who}: the answer names the post it was merged into: {r.text}"
    assert board.manager_get(a["id"])["mergedInto"] == {"id": b["id"], "title": "CSV export"}
    assert board.manager_get(b["id"])["voteCount"] == 1, "only the vote that moved counts"
    listed = [p["id"] for p in board.api.get(board.path, key=board.ws.key).json()["items"]]
    assert listed == [b["id"]], "a merged post is not listed"
