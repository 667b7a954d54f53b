"""Falcon resources of the posts service, one class per URI template."""

from __future__ import annotations

import falcon

from common.errors import BadRequest, Forbidden
from common.validation import body, choice_param, int_param
from posts import access, contract, schemas, shapes
from posts.service import ListQuery


def caller(req):
    return req.context.caller


class Resource:
    def __init__(self, context):
        context.workspaces.start_polling()  # resources exist only in API processes
        self.posts = context.posts
        self.votes = context.votes
        self.comments = context.comments
        self.merges = context.merges


class PostList(Resource):
    def on_get(self, req, resp, slug):
        moderation = req.get_param("moderationState") or None
        if moderation is not None:
            if moderation not in contract.MODERATION_STATES:
                raise BadRequest(f"query parameter 'moderationState' must be one of: {', '.join(contract.MODERATION_STATES)}")
            if moderation != contract.APPROVED and not access.is_manager(caller(req), slug):
                raise Forbidden("only managers can list posts that are not approved")
        query = ListQuery(
            board=req.get_param("board") or None,
            status=req.get_param("status") or None,
            q=req.get_param("q") or None,
            sort=choice_param(req, "sort", contract.DEFAULT_SORT, tuple(contract.SORTS)),
            limit=int_param(req, "limit", contract.LIST_LIMIT[0], 1, contract.LIST_LIMIT[1]),
            offset=int_param(req, "offset", 0, 0, contract.MAX_OFFSET),
            moderation=moderation,
        )
        resp.media = {"items": self.posts.list(caller(req), slug, query)}

    def on_post(self, req, resp, slug):
        # Who before what: an anonymous caller where anonymous posting is off gets 401, not 400.
        access.require_allowed(self.posts.workspaces, caller(req), slug, "anonSubmit")
        data = body(req, schemas.CREATE_POST)
        doc, ws = self.posts.create(caller(req), slug, data)
        resp.status = falcon.HTTP_201
        # Nobody has voted on a post that did not exist a moment ago: no votes query.
        resp.media = shapes.post(doc, ws, voted=False, manager=access.is_manager(caller(req), slug))


class PostSearch(Resource):
    def on_get(self, req, resp, slug):
        q = (req.get_param("q") or "").strip()
        if not q:
            raise BadRequest("query parameter 'q' is required")
        if len(q) > 500:
            raise BadRequest("query parameter 'q' must be at most 500 characters")
        limit = int_param(req, "limit", contract.SEARCH_LIMIT[0], 1, contract.SEARCH_LIMIT[1])
        resp.media = {"items": self.posts.search(caller(req), slug, q, req.get_param("board") or None, limit)}


class PostItem(Resource):
    def on_get(self, req, resp, slug, postId):
        resp.media = self.posts.get(caller(req), slug, postId)

    def on_patch(self, req, resp, slug, postId):
        access.require_manager_first(caller(req), slug)
        resp.media = self.posts.update(caller(req), slug, postId, body(req, schemas.UPDATE_POST))


class Merge(Resource):
    def on_post(self, req, resp, slug, postId):
        access.require_manager_first(caller(req), slug)
        data = body(req, schemas.MERGE)
        resp.media = self.merges.merge(caller(req), slug, postId, data["intoPostId"])


class Unmerge(Resource):
    def on_post(self, req, resp, slug, postId):
        resp.media = self.merges.unmerge(caller(req), slug, postId)


class Vote(Resource):
    def on_post(self, req, resp, slug, postId):
        post, created = self.votes.vote(caller(req), slug, postId)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200
        resp.media = post

    def on_delete(self, req, resp, slug, postId):
        resp.media = self.votes.unvote(caller(req), slug, postId)


class CommentList(Resource):
    def on_get(self, req, resp, slug, postId):
        limit = int_param(req, "limit", contract.COMMENTS_LIMIT[0], 1, contract.COMMENTS_LIMIT[1])
        offset = int_param(req, "offset", 0, 0, contract.MAX_OFFSET)
        resp.media = {"items": self.comments.list(caller(req), slug, postId, limit, offset)}

    def on_post(self, req, resp, slug, postId):
        access.require_allowed(self.comments.repo.workspaces, caller(req), slug, "anonComment")
        data = body(req, schemas.CREATE_COMMENT)
        resp.status = falcon.HTTP_201
        resp.media = self.comments.create(caller(req), slug, postId, data)


class Roadmap(Resource):
    def on_get(self, req, resp, slug):
        limit = int_param(req, "limit", contract.ROADMAP_LIMIT[0], 1, contract.ROADMAP_LIMIT[1])
        resp.media = self.posts.roadmap(caller(req), slug, req.get_param("board") or None, limit)


# -- internal (not routed by the gateway) -------------------------------------------------


class Lookup(Resource):
    """POST /internal/posts/lookup: the workspaces service checks changelog postIds."""

    def on_post(self, req, resp):
        data = body(req, schemas.LOOKUP)
        resp.media = {"found": self.posts.lookup(data["workspace"], data["ids"])}
