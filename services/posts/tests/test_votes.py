"""Votes: POST/DELETE /posts/{postId}/vote, anonymous voting, and 50 concurrent voters."""

from concurrent.futures import ThreadPoolExecutor

from pymongo import MongoClient

from testkit import wait_for
from .helpers import anon


def test_vote_and_unvote(board):
    post = board.post()
    user = board.user()
    r = board.vote(post["id"], user=user)
    assert r.status_code == 201, r.text
    assert (r.json()["voteCount"], r.json()["voted"]) == (1, True)
    again = board.vote(post["id"], user=user)
    assert again.status_code == 200 and again.json()["voteCount"] == 1  # one vote per identity
    assert board.get(post["id"], user=user).json()["voted"] is True
    assert board.get(post["id"], user=board.user()).json()["voted"] is False
    listed = board.api.get(board.path, user=user).json()["items"]
    assert [(p["id"], p["voted"]) for p in listed] == [(post["id"], True)]
    r = board.api.delete(f"{board.path}/{post['id']}/vote", user=user)
    assert r.status_code == 200, r.text
    assert (r.json()["voteCount"], r.json()["voted"]) == (0, False)
    r = board.api.delete(f"{board.path}/{post['id']}/vote", user=user)
    assert r.status_code == 200 and r.json()["voteCount"] == 0


def test_managers_vote_too(board):
    post = board.post()
    r = board.vote(post["id"], key=board.ws.key)
    assert r.status_code == 201 and r.json()["voted"] is True


def test_anonymous_voting_follows_anon_vote(board):
    post = board.post()
    visitor = anon("visitor-one-0000001")
    r = board.vote(post["id"], headers=visitor)
    assert r.status_code == 401, r.text
    assert board.api.delete(f"{board.path}/{post['id']}/vote", headers=visitor).status_code == 401
    board.ws.settings(anonVote=True)
    # The read model learns of the change from the event (or asks the owner again after a moment).
    r = wait_for(lambda: (lambda r: r if r.status_code != 401 else None)(board.vote(post["id"], headers=visitor)), what="anonVote")
    assert r.status_code == 201, r.text
    # The same anonymous id is the same voter; another id is another voter.
    assert board.vote(post["id"], headers=visitor).json()["voteCount"] == 1
    assert board.vote(post["id"], headers=anon("visitor-two-0000002")).json()["voteCount"] == 2
    assert board.get(post["id"], headers=visitor).json()["voted"] is True


def test_vote_errors(board, other_workspace):
    post = board.post()
    user = board.user()
    assert board.vote("0" * 24, user=user).status_code == 404
    assert board.vote("xyz", user=user).status_code == 404
    r = board.api.post(f"{other_workspace.path}/posts/{post['id']}/vote", key=other_workspace.key)
    assert r.status_code == 404
    board.api.patch(f"{board.path}/{post['id']}", key=board.ws.key, json={"moderationState": "spam"})
    assert board.vote(post["id"], user=user).status_code == 404  # not visible to this user
    assert board.api.delete(f"{board.path}/{post['id']}/vote", user=user).status_code == 404


def test_fifty_concurrent_voters(board, stack):
    post = board.post("Popular")
    tokens = [board.user(f"voter-{i}") for i in range(50)]
    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(lambda t: board.vote(post["id"], user=t).status_code, tokens))
    assert codes == [201] * 50
    assert board.manager_get(post["id"])["voteCount"] == 50
    db = MongoClient(stack.mongodb_uri)["feedback_posts"]
    from bson import ObjectId

    assert db.votes.count_documents({"postId": ObjectId(post["id"])}) == 50
    # And 50 concurrent withdrawals by half of them, mixed with repeated votes by the others.
    with ThreadPoolExecutor(max_workers=50) as pool:
        list(pool.map(
            lambda it: board.api.delete(f"{board.path}/{post['id']}/vote", user=it[1]) if it[0] % 2 else board.vote(post["id"], user=it[1]),
            enumerate(tokens),
        ))
    assert board.manager_get(post["id"])["voteCount"] == 25
    assert db.votes.count_documents({"postId": ObjectId(post["id"])}) == 25
