"""A person's data in the posts service (docs/privacy.md): what they wrote and voted for, for
their download (``POST /internal/posts/personal-data``), and its erasure when ``person.erased``
comes (people.privacy).

Erasure: every vote of theirs is withdrawn as an unvote is (counts, revenue and score moved,
``vote.deleted`` told), one post at a time; their posts and comments stay, written by "Deleted
user" (their id replaced, so nobody can tell two of an erased person's posts belong together);
where they acted (history, status changes, ownership, deletions, votes added for others) the
name becomes "Deleted user". Running it again finds nothing left to do: a redelivered event
is harmless.
"""

from __future__ import annotations

import logging
import secrets

from bson import ObjectId

from common.ids import iso
from posts.repository import SHADOW, PostRepository
from posts.votes import NotVoted, Votes

log = logging.getLogger(__name__)

ERASED_NAME = "Deleted user"
ERASED_AUTHOR = {"name": ERASED_NAME, "avatarUrl": None, "team": False}


class Erasure:
    def __init__(self, repo: PostRepository, votes: Votes):
        self.repo = repo
        self.votes = votes

    def data_of(self, user: str, slug: str | None) -> dict:
        return {
            "posts": [{"id": str(p["_id"]), "workspace": p["workspace"], "title": p["title"], "content": p.get("content", ""),
                       "status": p.get("statusSlug"), "createdAt": iso(p["createdAt"]), "deletedAt": iso(p.get("deletedAt"))}
                      for p in self.repo.written_by("posts", user, slug)],
            "comments": [{"id": str(c["_id"]), "workspace": c["workspace"], "postId": str(c["postId"]), "content": c["content"],
                          "private": bool(c.get("isPrivate")), "createdAt": iso(c["createdAt"]),
                          "deletedAt": iso(c.get("deletedAt"))}
                         for c in self.repo.written_by("comments", user, slug)],
            "votes": [{"workspace": v["workspace"], "postId": str(v["postId"]), "createdAt": iso(v["createdAt"])}
                      for v in self.repo.written_by("votes", user, slug)],
        }

    def erase(self, user: str, slug: str | None) -> dict:
        """Erase ``user`` in workspace ``slug`` (None: everywhere); what was done, counted."""
        withdrawn = 0
        for vote in self.repo.written_by("votes", user, slug):
            withdrawn += self._withdraw(vote, user)
        # One stand-in id for all of this erasure's writing: unlinkable to the erased id.
        stand_in = "erased:" + secrets.token_hex(8)
        posts = self.repo.written_by("posts", user, slug)
        for post in posts:
            self.repo.unit_of_work(lambda tx, post=post: tx.add(*tx.anonymize_post(post, stand_in, ERASED_AUTHOR)))
        for post in self.repo.acted_on(user, slug):
            self.repo.unit_of_work(lambda tx, post=post: tx.add(*tx.rename_actor(post, user, ERASED_NAME)))
        self.repo.unit_of_work(lambda tx: tx.add(*tx.anonymize_comments(user, slug, stand_in, ERASED_AUTHOR)))
        done = {"votes": withdrawn, "posts": len(posts)}
        log.info("erased %s in %s: %s", user, slug or "every workspace", done)
        return done

    def _withdraw(self, vote: dict, user: str) -> int:
        if vote["countsFor"].startswith(SHADOW):
            self.repo.unit_of_work(lambda tx: tx.add(tx.drop_vote(vote)))
            return 1
        slug, post_id = vote["workspace"], vote["countsFor"]

        def work(tx: PostRepository) -> None:
            doc = tx.find_post(slug, ObjectId(post_id))
            if doc is None:
                tx.add(tx.drop_vote(vote))  # its post is gone: nothing counts it
                return
            self.votes.withdrawn(tx, slug, doc, user)

        try:
            self.repo.unit_of_work(work, hot_key=post_id)
        except NotVoted:
            return 0  # withdrawn already (a redelivered event)
        return 1
