"""The widget's pages, answered by the kit's app (``common.app``: the gateway's signature,
request ids, metrics, one ``{"error"}`` shape, an ``ApiError`` answered with the API's status).

``GET /widget/v1.js`` is the script a host page includes (one file, the same for everyone).
``/widget/v1/{slug}/...`` is the panel's JSON API: every request, its CORS preflight included,
is checked against the workspace's ``widgetOrigins`` first (``widget.origins``); the answer
names the page's origin only when it may read it."""

from __future__ import annotations

import hashlib
import json
from importlib.resources import files

from common import i18n
from common.errors import BadRequest
from common.public_api import CLIENT_HEADER
from widget import origins
from widget.service import ANON_HEADER, USER_HEADER, identity

SCRIPT = "v1.js"
# The script's address names no version of its content, so a browser keeps it a day and then
# asks again with its ETag (304 while it is unchanged), rather than a year.
SCRIPT_MAX_AGE = 86_400


class Script:
    """``GET /widget/v1.js``: the widget, cached by browsers and revalidated by its content hash."""

    def __init__(self, context):
        self.body = (files("widget") / "static" / SCRIPT).read_bytes()
        self.etag = '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'

    def on_get(self, req, resp):
        resp.set_header("ETag", self.etag)
        resp.set_header("Cache-Control", f"public, max-age={SCRIPT_MAX_AGE}")
        resp.set_header("X-Content-Type-Options", "nosniff")
        # Any site may load it with a <script> tag (what it may then call is the API's check).
        resp.set_header("Cross-Origin-Resource-Policy", "cross-origin")
        if _matches(req.get_header("If-None-Match"), self.etag):
            resp.status = 304
            return
        resp.content_type = "text/javascript; charset=utf-8"
        resp.data = self.body


def _matches(if_none_match: str | None, etag: str) -> bool:
    """Whether If-None-Match names ``etag`` (weakly: the gateway marks a gzipped copy's W/)."""
    tags = [t.strip().removeprefix("W/") for t in (if_none_match or "").split(",")]
    return etag in tags or "*" in tags


class Endpoint:
    """One route of the panel's API: the origin check, its CORS headers and the caller's identity."""

    def __init__(self, context):
        self.widget = context.widget

    def on_options(self, req, resp, slug, **params):
        origin = req.get_header("Origin")
        self.widget.check_origin(slug, origin, req.get_header(CLIENT_HEADER))
        if origin:
            for name, value in origins.preflight_headers(origin).items():
                resp.set_header(name, value)
        resp.status = 204

    def open(self, req, resp, slug) -> tuple[dict, dict]:
        """The workspace's branding and the ``/v1`` identity of the panel's user, once the page's
        origin may call; the answer's CORS headers set (an API refusal keeps them, so the panel
        reads it: a 401 for an expired token asks the page for a fresh one)."""
        origin, client = req.get_header("Origin"), req.get_header(CLIENT_HEADER)
        branding = self.widget.check_origin(slug, origin, client)
        if origin:
            for name, value in origins.answer_headers(origin).items():
                resp.set_header(name, value)
        resp.set_header("Cache-Control", "no-store")  # a person's votes and requests
        return branding, identity(req.get_header(USER_HEADER), req.get_header(ANON_HEADER), client)


def language(req):
    """The panel's language, as its requests after the first name it (``?lang=``; what the
    config answered): the statuses' names are said in it."""
    return i18n.using(req.get_param("lang"))


def _body(req):
    try:
        return json.loads(req.context.body or b"null")
    except ValueError:
        raise BadRequest("request body is not valid JSON") from None


class Config(Endpoint):
    def on_get(self, req, resp, slug):
        branding, who = self.open(req, resp, slug)
        resp.media = self.widget.config(slug, branding, who, asked=req.get_param("lang"), languages=req.get_param("languages"))


class Posts(Endpoint):
    def on_get(self, req, resp, slug):
        _unused, who = self.open(req, resp, slug)
        with language(req):
            resp.media = self.widget.posts(slug, who, req.get_param("sort") or "top")

    def on_post(self, req, resp, slug):
        _unused, who = self.open(req, resp, slug)
        with language(req):
            resp.media = self.widget.submit(slug, who, _body(req))
        resp.status = 201


class Similar(Endpoint):
    def on_get(self, req, resp, slug):
        _unused, who = self.open(req, resp, slug)
        with language(req):
            resp.media = self.widget.similar(slug, who, req.get_param("q"))


class Mine(Endpoint):
    def on_get(self, req, resp, slug):
        _unused, who = self.open(req, resp, slug)
        with language(req):
            resp.media = self.widget.mine(slug, who)


class Vote(Endpoint):
    def on_post(self, req, resp, slug, postId):
        _unused, who = self.open(req, resp, slug)
        with language(req):
            resp.media = self.widget.vote(slug, who, postId, True)

    def on_delete(self, req, resp, slug, postId):
        _unused, who = self.open(req, resp, slug)
        with language(req):
            resp.media = self.widget.vote(slug, who, postId, False)


class Changelog(Endpoint):
    def on_get(self, req, resp, slug):
        _unused, who = self.open(req, resp, slug)
        resp.media = self.widget.changelog(slug, who)


class ChangelogSeen(Endpoint):
    def on_post(self, req, resp, slug):
        _unused, who = self.open(req, resp, slug)
        resp.media = self.widget.seen(slug, who)
