"""The site's pages, one resource per URI template: read the request, call the site, answer.

Every answer carries the security headers; every page is HTML rendered by Jinja2 with
autoescape; an API refusal becomes an HTML error page with the API's status.
"""

from __future__ import annotations

from importlib.resources import files
from urllib.parse import parse_qsl

import falcon

from common.public_api import CLIENT_HEADER
from web.api import ApiError
from web.service import Forbidden, Page, Redirect

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
STATIC_TYPES = {"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8"}


class PageResource:
    def __init__(self, context):
        self.site = context.site
        self.templates = context.templates

    def visitor(self, req, slug):
        return self.site.visitor(slug, req.cookies, req.get_header(CLIENT_HEADER))

    @staticmethod
    def form(req) -> dict:
        body = req.context.get("body")
        if body is None:
            body = req.bounded_stream.read()
        return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))

    @staticmethod
    def params(req) -> dict:
        return {k: (v[0] if isinstance(v, list) else v) for k, v in req.params.items()}

    def answer(self, req, resp, visitor, work) -> None:
        for name, value in SECURITY_HEADERS.items():
            resp.set_header(name, value)
        resp.cache_control = ["no-store"]
        try:
            result = work()
        except Forbidden as ex:
            result = Page("error.html", {"message": str(ex), "status": 403}, 403)
        except ApiError as ex:
            status = ex.status if 400 <= ex.status < 600 else 502
            result = Page("error.html", {"message": ex.message, "status": status}, status)
        secure = (req.get_header("X-Forwarded-Proto") or req.scheme) == "https"
        for name, value, max_age in visitor.cookies:
            if value is None:
                resp.unset_cookie(name, path="/")
            else:
                resp.set_cookie(name, value, max_age=max_age, path="/", secure=secure, http_only=True, same_site="Lax")
        if isinstance(result, Redirect):
            resp.status = falcon.HTTP_303
            resp.location = result.location
            resp.content_type = falcon.MEDIA_HTML
            resp.text = ""
            return
        context = {"slug": visitor.slug, "base": f"/b/{visitor.slug}", "visitor": visitor, "branding": None, **result.context}
        resp.status = result.status
        resp.content_type = "text/html; charset=utf-8"
        resp.text = self.templates.get_template(result.template).render(**context)


class Board(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.board(v, self.params(req)))


class PostPage(PageResource):
    def on_get(self, req, resp, slug, postId):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.post(v, postId, self.params(req)))


class Vote(PageResource):
    def on_post(self, req, resp, slug, postId):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.vote(v, postId, form))


class Comment(PageResource):
    def on_post(self, req, resp, slug, postId):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.comment(v, postId, form))


class Triage(PageResource):
    def on_post(self, req, resp, slug, postId):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.triage(v, postId, form))


class Roadmap(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.roadmap(v, self.params(req)))


class Changelog(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.changelog(v, self.params(req)))


class NewPost(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.new_post_form(v, self.params(req)))

    def on_post(self, req, resp, slug):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.submit(v, form))


class Sso(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        token = req.get_param("token") or ""
        self.answer(req, resp, v, lambda: self.site.sso_confirm(v, token))

    def on_post(self, req, resp, slug):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.sso(v, form))


class SignOut(PageResource):
    def on_post(self, req, resp, slug):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.sign_out(v, form))


class ManagerSignIn(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.manager_sign_in_form(v))

    def on_post(self, req, resp, slug):
        v = self.visitor(req, slug)
        form = self.form(req)
        self.answer(req, resp, v, lambda: self.site.manager_sign_in(v, form))


class Queue(PageResource):
    def on_get(self, req, resp, slug):
        v = self.visitor(req, slug)
        self.answer(req, resp, v, lambda: self.site.queue(v, self.params(req)))


class ThemeCss(PageResource):
    def on_get(self, req, resp, slug):
        v = self.site.visitor(slug, {}, req.get_header(CLIENT_HEADER))
        for name, value in SECURITY_HEADERS.items():
            resp.set_header(name, value)
        try:
            resp.text = self.site.theme_css(v)
        except ApiError as ex:
            resp.status = ex.status
            resp.text = "/* unknown workspace */\n"
        resp.content_type = STATIC_TYPES["css"]
        resp.cache_control = ["public", "max-age=60"]


class Static(PageResource):
    NAMES = {"site.css", "site.js"}

    def on_get(self, req, resp, slug, name):
        for header, value in SECURITY_HEADERS.items():
            resp.set_header(header, value)
        if name not in self.NAMES:
            resp.status = falcon.HTTP_404
            resp.content_type = "text/plain; charset=utf-8"
            resp.text = "not found\n"
            return
        resp.content_type = STATIC_TYPES[name.rsplit(".", 1)[1]]
        resp.cache_control = ["public", "max-age=300"]
        resp.data = (files("web") / "static" / name).read_bytes()
