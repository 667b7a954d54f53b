"""Moderation: the queue of posts waiting for approval, and the suggested duplicates (the posts
service's, made when a post is created), each with its two posts, to merge or dismiss."""

from __future__ import annotations

from common.errors import NotFound
from common.i18n import _
from common.validation import check
from web import schemas
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor


class QueueSection(Section):
    path = "/queue"

    def show(self, visitor: Visitor, params: dict):
        if redirect := self.allowed(visitor):
            return redirect
        posts = self.call(visitor, "GET", "/posts", query={"moderationState": "pending", "sort": "oldest", "limit": 100})["items"]
        return self.page(visitor, "queue.html", {"posts": posts})


class DuplicatesSection(Section):
    path = "/duplicates"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        suggestions = self.call(visitor, "GET", "/suggestions",
                                query={"state": "open", "limit": schemas.SUGGESTIONS_LIMIT})["items"]
        done = params.get("done") if params.get("done") in ("accept", "dismiss") else ""
        return self.page(visitor, "duplicates.html", {"suggestions": suggestions, "error": error, "decided": done}, status)

    def decide(self, visitor: Visitor, suggestion_id: str, form: dict):
        self.checked(visitor, form)
        action = check(form, schemas.SUGGESTION)["action"]
        if not schemas.SUGGESTION_ID.fullmatch(suggestion_id):
            raise NotFound(_("There is no suggestion “%(id)s”.", id=suggestion_id))
        try:
            self.call(visitor, "POST", f"/suggestions/{suggestion_id}/{action}")
        except ApiError as ex:
            # Decided meanwhile (409), gone (404), a post that can no longer be merged (400):
            # the list again, as it is now, with the API's reason.
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done=action)


class Queue(SectionResource):
    section = QueueSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))


class Duplicates(SectionResource):
    section = DuplicatesSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))


class DuplicateDecision(SectionResource):
    section = DuplicatesSection

    def on_post(self, req, resp, slug, suggestionId):
        self.respond(req, resp, slug, self.admin.decide, suggestionId, form(req))
