"""The platform's own pages, outside any workspace: the landing page (``/``), the API reference
(``/v1/docs``) and the stylesheet they use (``/static/{name}``).

They have no visitor: no cookie is read or set and the answer is the same for everyone, so it
is cacheable (``Cache-Control: public`` with an ``ETag``; a request whose ``If-None-Match``
names it is a 304). Their language is the link's ``?lang=``, else the browser's
``Accept-Language`` among every language the platform speaks (``Vary: Accept-Language``), else
English. The reference is rendered from the document the gateway serves at
``/v1/openapi.json``, fetched with the site's API client (``web.reference`` turns it into the
template's context), so the page and the API cannot disagree: the document is asked again at
most every ``REFRESH_SECONDS`` and the page rendered again only when it changed (once for each
language asked). When the gateway cannot answer, the last page rendered is served; before any,
the error page (503).

``PlatformResource.respond`` is these pages' one place that answers, as ``PageResource.respond``
is a board's: the security headers first, a refusal as the error page, then the answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import quote

import falcon

from common import i18n
from common.errors import FeedbackError
from common.i18n import _
from common.ids import SLUG
from web import reference
from web.api import ApiClient, ApiError
from web.contract import SECURITY_HEADERS

# How long a browser or a proxy keeps a platform page before asking again (with its ETag).
MAX_AGE = 300
# How often the reference asks the gateway whether its document changed (a deploy changes it).
REFRESH_SECONDS = 60
DOCUMENT = "/openapi.json"  # relative to /v1, as the API client calls
HTML = "text/html; charset=utf-8"
# The answer of ``/`` to a client that prefers JSON: where things are (``board``: a template).
LINKS = {"name": "Feedback", "api": "/v1", "openapi": "/v1/openapi.json", "docs": "/v1/docs"}


@dataclass
class Answer:
    """What a platform page answers: ``max_age`` > 0 makes it public and cacheable (with an
    ETag of its body); ``location``, a 303 there."""

    body: bytes
    content_type: str = HTML
    status: int = 200
    max_age: int = 0
    location: str | None = None
    vary: tuple[str, ...] = ()


class Platform:
    """The pages' rules: what each answers, and the reference's cache."""

    def __init__(self, api: ApiClient, templates, site_root: str, static_file: Callable,
                 clock: Callable[[], float] = time.monotonic):
        self.api = api
        self.templates = templates
        self.site_root = site_root
        self.static_file = static_file
        self.clock = clock
        self._lock = threading.Lock()
        self._pages: dict[str, Answer] = {}  # the reference of the document ``_digest``, by language
        self._digest: str | None = None
        self._document: dict | None = None
        self._asked_at: float | None = None

    def render(self, template: str, **context) -> bytes:
        """``template`` in the language of the moment; its links to the other platform pages keep
        that language when it is not the default (these pages set no cookie to remember it)."""
        tag = i18n.current().tag
        lang_query = "" if tag == i18n.DEFAULT else f"?lang={quote(tag)}"
        return self.templates.get_template(template).render(page_theme="system", lang_query=lang_query,
                                                            **context).encode()

    def landing(self, params: dict, prefers_json: bool) -> Answer:
        """The start page; ``?workspace=<slug>`` (its form) is a 303 to that workspace's board."""
        vary = ("Accept",)
        if "workspace" in params:
            typed = params["workspace"].strip().lower()
            if SLUG.match(typed):
                # A language the link asked for goes on to the board (which keeps it in a cookie).
                asked = f"?lang={quote(params['lang'])}" if i18n.is_locale(params.get("lang")) else ""
                return Answer(b"", status=303, location=self.site_root.format(slug=quote(typed)) + asked, vary=vary)
            error = _("“%(typed)s” is not a workspace's slug: use lower-case letters, digits and hyphens, as in "
                      "%(example)s.", typed=params["workspace"], example=self.site_root.format(slug="acme"))
            return Answer(self.render("landing.html", current="home", workspace=params["workspace"], error=error),
                          status=400, vary=vary)
        if prefers_json:
            body = json.dumps({**LINKS, "board": self.site_root}).encode()
            return Answer(body, falcon.MEDIA_JSON, max_age=MAX_AGE, vary=vary)
        return Answer(self.render("landing.html", current="home", workspace=""), max_age=MAX_AGE, vary=vary)

    def api_reference(self) -> Answer:
        """The reference in the language of the moment, of the last document the gateway served:
        asked again at most every ``REFRESH_SECONDS``, rendered again when it changed."""
        now = self.clock()
        with self._lock:
            if self._document is not None and now - self._asked_at < REFRESH_SECONDS:
                return self._page()
        try:
            document = self.api.call("GET", DOCUMENT, {})
            if not isinstance(document, dict) or not isinstance(document.get("paths"), dict):
                raise ApiError(502, _("the API's OpenAPI document is not one"))
        except ApiError:
            with self._lock:
                if self._document is not None:
                    return self._page()  # the last document the gateway served, rather than no reference
            raise
        digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
        with self._lock:
            if digest != self._digest:
                self._pages, self._digest, self._document = {}, digest, document
            self._asked_at = now
            return self._page()

    def _page(self) -> Answer:
        """The reference of ``_document`` in the language of the moment, rendered on first asking
        (the context holds words of its own, a schema's constraints, so it is made in it too)."""
        tag = i18n.current().tag
        if tag not in self._pages:
            html = self.render("reference.html", current="docs", **reference.context(self._document))
            self._pages[tag] = Answer(html, max_age=MAX_AGE)
        return self._pages[tag]

    def static(self, name: str) -> Answer:
        asset = self.static_file(None, name)  # the board's files (the visitor is not read)
        return Answer(asset.body, asset.content_type, max_age=asset.max_age)

    def error(self, ex: Exception) -> Answer:
        if isinstance(ex, FeedbackError):
            status = falcon.http_status_to_code(ex.status)
        else:
            status = ex.status if 400 <= ex.status < 600 else 502
        return Answer(self.render("platform_error.html", status=status, message=ex.message), status=status)


def language_of(req) -> str:
    """The language of a platform page: the link's ``?lang=``, else the browser's, among all."""
    return i18n.choose(asked=req.get_param("lang"), accept_language=req.get_header("Accept-Language"))


def etag_of(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def fresh(if_none_match: str | None, etag: str) -> bool:
    """Whether the client's copy is this one (RFC 9110: compared weakly, ``*`` is any)."""
    tags = {t.strip().removeprefix("W/") for t in (if_none_match or "").split(",")}
    return etag in tags or "*" in tags


class PlatformResource:
    def __init__(self, context):
        self.platform: Platform = context.platform

    def respond(self, req, resp, action, *args) -> None:
        resp.set_headers(SECURITY_HEADERS)
        with i18n.using(language_of(req)):
            try:
                answer = action(*args)
            except (FeedbackError, ApiError) as ex:
                answer = self.platform.error(ex)
        resp.status = answer.status
        resp.content_type = answer.content_type
        vary = (*answer.vary, "Accept-Language") if answer.content_type == HTML else answer.vary
        if vary:
            resp.vary = vary
        if answer.location:
            resp.location = answer.location
        if not answer.max_age:
            resp.cache_control = ["no-store"]
            resp.data = answer.body
            return
        resp.cache_control = ["public", f"max-age={answer.max_age}"]
        resp.etag = etag = etag_of(answer.body)
        if fresh(req.get_header("If-None-Match"), etag):
            resp.status = falcon.HTTP_304
            return
        resp.data = answer.body


class Landing(PlatformResource):
    def on_get(self, req, resp):
        prefers_json = req.client_prefers([falcon.MEDIA_HTML, falcon.MEDIA_JSON]) == falcon.MEDIA_JSON
        params = {k: (v[0] if isinstance(v, list) else v) for k, v in req.params.items()}
        self.respond(req, resp, self.platform.landing, params, prefers_json)


class ApiReference(PlatformResource):
    def on_get(self, req, resp):
        self.respond(req, resp, self.platform.api_reference)


class PlatformStatic(PlatformResource):
    def on_get(self, req, resp, name):
        self.respond(req, resp, self.platform.static, name)
