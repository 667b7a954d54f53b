"""Comments: threaded by ``parentId``, private ones for the team only.

Private comments never reach a non-manager: lists and counts leave them out for
non-managers (``commentCount`` counts what the caller can see), and the
``comment.created`` event marks them ``isPrivate: true`` (webhook endpoints are
registered by managers, so deliveries go to the team).
"""

from __future__ import annotations

from bson import ObjectId
from bson.errors import InvalidId
from pymongo import InsertOne

from common import auth
from common.errors import BadRequest, Forbidden, NotFound
from common.ids import now, object_id
from posts import access, contract, shapes
from posts.service import PostStore, check_content


class CommentService:
    def __init__(self, repo: PostStore):
        self.repo = repo

    def create(self, caller: auth.Caller, slug: str, post_id: str, fields: dict) -> dict:
        access.require_allowed(self.repo.workspaces, caller, slug, "anonComment")
        manager = access.is_manager(caller, slug)
        private = bool(fields.get("isPrivate", False))
        if private and not manager:
            raise Forbidden("only managers can write private comments")
        check_content(fields["content"], contract.COMMENT_MAX)
        oid = object_id(post_id, "post")
        parent = self._parent(caller, slug, oid, fields.get("parentId"))
        if parent is not None and parent.get("isPrivate"):
            private = True  # a reply in a private thread stays private
        comment_id = ObjectId()
        doc = {
            "_id": comment_id,
            "workspace": slug,
            "postId": oid,
            "parentId": str(parent["_id"]) if parent else None,
            "path": f"{parent['path']}/{comment_id}" if parent else str(comment_id),
            "depth": parent["depth"] + 1 if parent else 0,
            "content": fields["content"],
            "authorId": access.identity(caller),
            "isTeamMember": manager,
            "isPrivate": private,
            "createdAt": now(),
        }
        counter = "privateCommentCount" if private else "commentCount"

        def work(session):
            post = self.repo.posts.find_one(
                {"_id": oid, "workspace": slug}, projection={"title": 1, "moderationState": 1, "authorId": 1}, session=session
            )
            if post is None or not access.can_see(caller, slug, post):
                raise NotFound(f"post '{post_id}' not found")
            event = {"comment": shapes.comment(doc), "post": {"id": post_id, "title": post["title"]}}
            self.repo.writer.write(session, [
                InsertOne(doc, namespace=self.repo.comments.full_name),
                self.repo.update_op(oid, {"$inc": {counter: 1}}),
                self.repo.event_op(slug, contract.COMMENT_CREATED, event),
            ])

        self.repo.store.transaction(work, hot_key=post_id)
        return shapes.comment(doc)

    def list(self, caller: auth.Caller, slug: str, post_id: str, limit: int, offset: int) -> list[dict]:
        self.repo.workspaces.get(slug)
        post = self.repo.find_visible(caller, slug, post_id)
        query: dict = {"postId": post["_id"]}
        if not access.is_manager(caller, slug):
            query["isPrivate"] = False
        docs = self.repo.comments.find(query, sort=[("path", 1)], skip=offset, limit=limit, batch_size=limit)
        return [shapes.comment(d) for d in docs]

    def _parent(self, caller: auth.Caller, slug: str, post_oid: ObjectId, parent_id: str | None) -> dict | None:
        if parent_id is None:
            return None
        try:
            parent_oid = ObjectId(parent_id)
        except (InvalidId, TypeError):
            raise BadRequest(f"field 'parentId': no comment '{parent_id}' on this post") from None
        parent = self.repo.comments.find_one({"_id": parent_oid, "workspace": slug})
        if parent is None or (parent.get("isPrivate") and not access.is_manager(caller, slug)):
            raise BadRequest(f"field 'parentId': no comment '{parent_id}' on this post")
        if parent["postId"] != post_oid:
            raise BadRequest(f"field 'parentId': comment '{parent_id}' belongs to another post")
        if parent.get("depth", 0) + 1 > contract.MAX_COMMENT_DEPTH:
            raise BadRequest(f"field 'parentId': threads nest at most {contract.MAX_COMMENT_DEPTH} levels deep")
        return parent
