"""Falcon resources of the posts service, one class per URI template: HTTP only.

Each reads the path, query and body, calls the concept its route is about (posts.plugin's
Context: the service, votes, merges, the board), which checks who may, then what, and sets
the status and media it returns.
"""

from __future__ import annotations

import falcon

from common.errors import BadRequest
from common.validation import OFFSET, media, page_params, param
from posts import schemas
from posts.board import ListQuery

FIELD_PREFIX = "field."


class Resource:
    def __init__(self, context):
        self.service = context.service
        self.votes = context.votes
        self.merges = context.merges
        self.board = context.board


class PostList(Resource):
    def on_get(self, req, resp, slug):
        query = ListQuery(
            board=param(req, "board", schemas.BOARD_FILTER) or None,
            status=param(req, "status", schemas.STATUS_FILTER) or None,
            q=param(req, "q", schemas.TEXT_FILTER) or None,
            sort=param(req, "sort", schemas.SORT),
            limit=param(req, "limit", schemas.LIST_LIMIT),
            offset=param(req, "offset", OFFSET),
            moderation=param(req, "moderationState", schemas.MODERATION_FILTER),
            tags=_tags(req),
            owner=param(req, "owner", schemas.OWNER_FILTER) or None,
            fields=tuple((name[len(FIELD_PREFIX):], param(req, name, schemas.FIELD_FILTER))
                         for name in sorted(req.params) if name.startswith(FIELD_PREFIX)),
        )
        resp.media = self.board.list(req.context.caller, slug, query)

    def on_post(self, req, resp, slug):
        resp.status = falcon.HTTP_201
        resp.media = self.service.create(req.context.caller, slug, media(req))


def _tags(req) -> tuple[str, ...]:
    """The ``tag`` filter: given once or more (posts with every one)."""
    raw = req.params.get("tag")
    tags = [] if raw is None else [raw] if isinstance(raw, str) else raw
    if len(tags) > schemas.TAG_FILTER["maxItems"]:
        raise BadRequest(f"query parameter 'tag' is given more than {schemas.TAG_FILTER['maxItems']} times")
    for tag in tags:
        if not 0 < len(tag) <= schemas.TAG_FILTER["items"]["maxLength"]:
            raise BadRequest("query parameter 'tag' must be a tag's slug")
    return tuple(tags)


class Triage(Resource):
    """GET / PUT /v1/workspaces/{slug}/triage: the workspace's tags, custom fields and score formula."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.triage_settings(req.context.caller, slug)

    def on_put(self, req, resp, slug):
        resp.media = self.service.save_triage(req.context.caller, slug, media(req))


class TriagePreview(Resource):
    """POST /v1/workspaces/{slug}/triage/preview: the posts a score formula would rank first, unsaved."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.preview_triage(req.context.caller, slug, media(req))


class SuggestionList(Resource):
    """GET /v1/workspaces/{slug}/suggestions: suspected duplicates for the team, newest first."""

    def on_get(self, req, resp, slug):
        limit, offset = page_params(req, schemas.SUGGESTIONS_LIMIT)
        state = param(req, "state", schemas.SUGGESTION_STATE)
        resp.media = self.merges.suggestions(req.context.caller, slug, state, limit, offset)


class SuggestionAccept(Resource):
    def on_post(self, req, resp, slug, suggestionId):
        resp.media = self.merges.accept_suggestion(req.context.caller, slug, suggestionId)


class SuggestionDismiss(Resource):
    def on_post(self, req, resp, slug, suggestionId):
        resp.media = self.merges.dismiss_suggestion(req.context.caller, slug, suggestionId)


class PostSearch(Resource):
    def on_get(self, req, resp, slug):
        q = param(req, "q", schemas.SEARCH_QUERY, required=True)
        board = param(req, "board", schemas.BOARD_FILTER) or None
        resp.media = self.board.search(req.context.caller, slug, q, board, param(req, "limit", schemas.SEARCH_LIMIT))


class PostStats(Resource):
    def on_get(self, req, resp, slug):
        stalled_days = param(req, "stalledDays", schemas.STALLED_DAYS)
        top = param(req, "top", schemas.STATS_TOP)
        board = param(req, "board", schemas.BOARD_FILTER) or None
        resp.media = self.board.stats(req.context.caller, slug, board, stalled_days, top)


class PostActivity(Resource):
    """GET /v1/workspaces/{slug}/posts/activity: posts, votes and comments a day (the team's)."""

    def on_get(self, req, resp, slug):
        resp.media = self.board.activity(req.context.caller, slug, param(req, "days", schemas.ACTIVITY_DAYS))


class PostItem(Resource):
    def on_get(self, req, resp, slug, postId):
        resp.media = self.service.get(req.context.caller, slug, postId)

    def on_patch(self, req, resp, slug, postId):
        resp.media = self.service.update(req.context.caller, slug, postId, media(req))

    def on_delete(self, req, resp, slug, postId):
        self.service.delete(req.context.caller, slug, postId)
        resp.status = falcon.HTTP_204


class Merge(Resource):
    def on_post(self, req, resp, slug, postId):
        resp.media = self.merges.merge(req.context.caller, slug, postId, media(req))


class Unmerge(Resource):
    def on_post(self, req, resp, slug, postId):
        resp.media = self.merges.unmerge(req.context.caller, slug, postId)


class Vote(Resource):
    def on_post(self, req, resp, slug, postId):
        post, created = self.votes.vote(req.context.caller, slug, postId)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200
        resp.media = post

    def on_delete(self, req, resp, slug, postId):
        resp.media = self.votes.unvote(req.context.caller, slug, postId)


class VoteList(Resource):
    """GET / POST /v1/workspaces/{slug}/posts/{postId}/votes: the votes counting for a post (team);
    a vote on someone's behalf."""

    def on_get(self, req, resp, slug, postId):
        limit, offset = page_params(req, schemas.VOTES_LIMIT)
        resp.media = self.votes.votes(req.context.caller, slug, postId, limit, offset)

    def on_post(self, req, resp, slug, postId):
        resp.media, created = self.votes.vote_for(req.context.caller, slug, postId, media(req))
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200


class CommentList(Resource):
    def on_get(self, req, resp, slug, postId):
        limit, offset = page_params(req, schemas.COMMENTS_LIMIT)
        resp.media = self.service.comments(req.context.caller, slug, postId, limit, offset)

    def on_post(self, req, resp, slug, postId):
        resp.status = falcon.HTTP_201
        resp.media = self.service.comment(req.context.caller, slug, postId, media(req))


class PostHistory(Resource):
    def on_get(self, req, resp, slug, postId):
        resp.media = self.service.history(req.context.caller, slug, postId)


class CommentItem(Resource):
    """PATCH / DELETE /v1/workspaces/{slug}/posts/{postId}/comments/{commentId}: its author's
    edit; its author's or the team's deletion."""

    def on_patch(self, req, resp, slug, postId, commentId):
        resp.media = self.service.edit_comment(req.context.caller, slug, postId, commentId, media(req))

    def on_delete(self, req, resp, slug, postId, commentId):
        self.service.delete_comment(req.context.caller, slug, postId, commentId)
        resp.status = falcon.HTTP_204


class Roadmap(Resource):
    def on_get(self, req, resp, slug):
        limit = param(req, "limit", schemas.ROADMAP_LIMIT)
        board = param(req, "board", schemas.BOARD_FILTER) or None
        resp.media = self.board.roadmap(req.context.caller, slug, board, limit)


# -- internal (not routed by the gateway) -------------------------------------------------


class Voters(Resource):
    """POST /internal/posts/voters: the posts and their signed-in voters, for the notifications service."""

    def on_post(self, req, resp):
        resp.media = self.board.voters(media(req))


class InUse(Resource):
    """POST /internal/posts/in-use: the workspaces service asks before deleting a board or a status."""

    def on_post(self, req, resp):
        resp.media = self.board.in_use(media(req))


class Lookup(Resource):
    """POST /internal/posts/lookup: the workspaces service checks changelog postIds."""

    def on_post(self, req, resp):
        resp.media = self.board.lookup(media(req))


class Export(Resource):
    """POST /internal/posts/export: a page of a workspace's data, for the portability service."""

    def on_post(self, req, resp):
        resp.media = self.board.export(media(req))


class Import(Resource):
    """POST /internal/posts/import: a batch of what an import brings, for the portability service."""

    def __init__(self, context):
        super().__init__(context)
        self.imports = context.imports

    def on_post(self, req, resp):
        resp.media = self.imports.run(media(req))
