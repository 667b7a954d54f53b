"""A person's data in the posts service (docs/privacy.md): what they wrote and voted for, for
their download (``POST /internal/posts/personal-data``), and its erasure when ``person.erased``
comes (people.privacy).

Erasure: every vote of theirs is withdrawn as an unvote is (counts, revenue and score moved,
``vote.deleted`` told), one post at a time; their posts and comments stay, written by "Deleted
user" (their id replaced, so nobody can tell two of an erased person's posts belong together),
or, where the workspace's ``erasedUserContent`` is ``delete``, are deleted as the team deletes
them (emptied too; a post merged with others stays, anonymised: its votes count elsewhere);
where they acted (history, status changes, ownership, deletions, votes added for others) the
name becomes "Deleted user". Running it again finds nothing left to do: a redelivered event
is harmless.
"""

from __future__ import annotations

import logging
import secrets

from bson import ObjectId

from common.errors import NotFound
from common.ids import iso, now
from posts import contract
from posts.readmodel import Workspaces
from posts.repository import SHADOW, PostRepository
from posts.votes import NotVoted, Votes

log = logging.getLogger(__name__)

ERASED_NAME = "Deleted user"
ERASED_AUTHOR = {"name": ERASED_NAME, "avatarUrl": None, "team": False}
ERASED_ACTOR = {"id": "erased", "name": ERASED_NAME}  # who deleted what an erasure deletes


class Erasure:
    def __init__(self, repo: PostRepository, votes: Votes, workspaces: Workspaces):
        self.repo = repo
        self.votes = votes
        self.workspaces = workspaces

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
        posts, comments = self.repo.written_by("posts", user, slug), self.repo.written_by("comments", user, slug)
        deleting = {ws for ws in {d["workspace"] for d in (*posts, *comments)} if self._deletes(ws)}
        for comment in comments:
            if comment["workspace"] in deleting and comment.get("deletedAt") is None:
                self.repo.unit_of_work(lambda tx, c=comment: self._delete_comment(tx, c), hot_key=str(comment["postId"]))
        for post in posts:
            self.repo.unit_of_work(lambda tx, post=post: self._anonymize_post(tx, post, stand_in, post["workspace"] in deleting))
        for post in self.repo.acted_on(user, slug):
            self.repo.unit_of_work(lambda tx, post=post: tx.add(*tx.rename_actor(post, user, ERASED_NAME)))
        self.repo.unit_of_work(lambda tx: tx.add(*tx.anonymize_comments(user, slug, stand_in, ERASED_AUTHOR)))
        done = {"votes": withdrawn, "posts": len(posts), "deletedIn": sorted(deleting)}
        log.info("erased %s in %s: %s", user, slug or "every workspace", done)
        return done

    def _deletes(self, slug: str) -> bool:
        try:
            return self.workspaces.get(slug).delete_erased
        except NotFound:
            return False  # a workspace gone: nothing of it is shown anywhere

    @staticmethod
    def _anonymize_post(tx: PostRepository, post: dict, stand_in: str, delete: bool) -> None:
        tx.add(*tx.anonymize_post(post, stand_in, ERASED_AUTHOR))
        if delete and post.get("deletedAt") is None and not (post.get("mergedInto") or post.get("mergedPosts")):
            slug, post_id = post["workspace"], str(post["_id"])
            event = {"post": {"id": post_id, "title": post["title"], "boardId": post["boardId"]}, "actor": ERASED_ACTOR,
                     "byAuthor": True}
            tx.add(*tx.delete_post(post, ERASED_ACTOR, now()), *tx.edit_post(post, {"content": ""}),
                   tx.close_suggestions_of(slug, post_id, ERASED_ACTOR), tx.event(slug, contract.POST_DELETED, event))

    @staticmethod
    def _delete_comment(tx: PostRepository, comment: dict) -> None:
        """As the team deletes a comment, emptied: the post counts one less."""
        slug, post_id = comment["workspace"], str(comment["postId"])
        post = tx.find_post(slug, comment["postId"])
        if post is None:
            return
        last = None if comment.get("isPrivate") else tx.last_public_comment(post["_id"], comment["_id"])
        gone = {"id": str(comment["_id"]), "postId": post_id, "parentId": comment.get("parentId"),
                "isPrivate": bool(comment.get("isPrivate"))}
        event = {"comment": gone, "post": {"id": post_id, "title": post["title"]}, "actor": ERASED_ACTOR, "byAuthor": True}
        tx.add(tx.delete_comment(comment, ERASED_ACTOR, now()), tx.edit_comment(comment, "", now()),
               *tx.uncount_comment(post, comment, last), tx.event(slug, contract.COMMENT_DELETED, event))

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
