"""The trending order (issue 37): the posts with the most votes cast in the last 14 days first,
then the rest by votes; filters and paging as every list, merged votes counted where they count."""

from datetime import timedelta

from common.ids import now
from posts import contract
from posts.board import ListQuery

from .helpers import user


def _voted(context, slug, title, votes, days_ago=0):
    post = context.service.create(user(slug), slug, {"boardSlug": "features", "title": title, "content": ""})
    for _ in range(votes):
        context.votes.vote(user(slug), slug, post["id"])
    if days_ago:  # votes cast back then (an import keeps a vote's date too)
        context.store.db["votes"].update_many({"countsFor": post["id"]}, {"$set": {"createdAt": now() - timedelta(days=days_ago)}})
    return post["id"]


def test_recent_votes_come_first_then_the_rest_by_votes(context, slug):
    context.workspaces.apply({**_snapshot(context, slug), "authorVotes": False})
    old_favourite = _voted(context, slug, "Old favourite", 6, days_ago=30)
    rising = _voted(context, slug, "Rising", 2)
    steady = _voted(context, slug, "Steady", 1)
    quiet = _voted(context, slug, "Quiet", 0)
    mixed = _voted(context, slug, "Mixed", 4, days_ago=contract.TRENDING_DAYS + 1)
    context.votes.vote(user(slug), slug, mixed)  # one of its five votes is recent
    reader = user(slug)
    ids = lambda **q: [p["id"] for p in context.board.list(reader, slug, ListQuery(**q))["items"]]
    assert ids(sort="top", limit=10) == [old_favourite, mixed, rising, steady, quiet]
    trending = [rising, mixed, steady, old_favourite, quiet]  # recent votes 2, 1, 1 (mixed has more votes), then by votes
    assert ids(sort="trending", limit=10) == trending
    pages = [ids(sort="trending", limit=2, offset=o) for o in (0, 2, 4)]
    assert sum(pages, []) == trending
    assert ids(sort="trending", limit=10, q="rising") == [rising]


def _snapshot(context, slug):
    ws = context.workspaces.get(slug)
    return {"slug": slug, "name": "Unit", "version": ws.version + 1, "boards": list(ws.boards), "statuses": list(ws.statuses),
            "defaultStatus": ws.default_status}
