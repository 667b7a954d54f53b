"""Falcon resources of the posts service, one class per URI template: HTTP only.

Each reads the path, query and body, calls the service (which checks who may, then what),
and sets the status and media it returns.
"""

from __future__ import annotations

import falcon

from common.validation import MAX_OFFSET, choice_param, int_param, media, page_params
from posts import contract
from posts.service import ListQuery


class Resource:
    def __init__(self, context):
        self.service = context.service


class PostList(Resource):
    def on_get(self, req, resp, slug):
        query = ListQuery(
            board=req.get_param("board") or None,
            status=req.get_param("status") or None,
            q=req.get_param("q") or None,
            sort=choice_param(req, "sort", contract.DEFAULT_SORT, tuple(contract.SORTS)),
            limit=int_param(req, "limit", contract.LIST_LIMIT[0], 1, contract.LIST_LIMIT[1]),
            offset=int_param(req, "offset", 0, 0, MAX_OFFSET),
            moderation=choice_param(req, "moderationState", "", ("", *contract.MODERATION_STATES)) or None,
        )
        resp.media = self.service.list(req.context.caller, slug, query)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.create(req.context.caller, slug, media(req))


class PostSearch(Resource):
    def on_get(self, req, resp, slug):
        limit = int_param(req, "limit", contract.SEARCH_LIMIT[0], 1, contract.SEARCH_LIMIT[1])
        resp.media = self.service.search(req.context.caller, slug, req.get_param("q") or "", req.get_param("board") or None, limit)


class PostStats(Resource):
    def on_get(self, req, resp, slug):
        stalled_days = int_param(req, "stalledDays", contract.STALLED_DAYS[0], 0, contract.STALLED_DAYS[1])
        top = int_param(req, "top", contract.STATS_TOP[0], 1, contract.STATS_TOP[1])
        resp.media = self.service.stats(req.context.caller, slug, req.get_param("board") or None, stalled_days, top)


class PostItem(Resource):
    def on_get(self, req, resp, slug, postId):
        resp.media = self.service.get(req.context.caller, slug, postId)

    def on_patch(self, req, resp, slug, postId):
        resp.media = self.service.update(req.context.caller, slug, postId, media(req))


class Merge(Resource):
    def on_post(self, req, resp, slug, postId):
        resp.media = self.service.merge(req.context.caller, slug, postId, media(req))


class Unmerge(Resource):
    def on_post(self, req, resp, slug, postId):
        resp.media = self.service.unmerge(req.context.caller, slug, postId)


class Vote(Resource):
    def on_post(self, req, resp, slug, postId):
        post, created = self.service.vote(req.context.caller, slug, postId)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200
        resp.media = post

    def on_delete(self, req, resp, slug, postId):
        resp.media = self.service.unvote(req.context.caller, slug, postId)


class CommentList(Resource):
    def on_get(self, req, resp, slug, postId):
        limit, offset = page_params(req, *contract.COMMENTS_LIMIT)
        resp.media = self.service.comments(req.context.caller, slug, postId, limit, offset)

    def on_post(self, req, resp, slug, postId):
        resp.status = falcon.HTTP_201
        resp.media = self.service.comment(req.context.caller, slug, postId, media(req))


class Roadmap(Resource):
    def on_get(self, req, resp, slug):
        limit = int_param(req, "limit", contract.ROADMAP_LIMIT[0], 1, contract.ROADMAP_LIMIT[1])
        resp.media = self.service.roadmap(req.context.caller, slug, req.get_param("board") or None, limit)


# -- internal (not routed by the gateway) -------------------------------------------------


class Lookup(Resource):
    """POST /internal/posts/lookup: the workspaces service checks changelog postIds."""

    def on_post(self, req, resp):
        resp.media = self.service.lookup(media(req))
