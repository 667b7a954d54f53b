"""The site's pages, one resource per URI template: read the request, call the site, answer.

Every responder is one call of :meth:`PageResource.respond`, the one place that answers: it puts
the security headers on the response first (so every answer carries them, an error page, a file
or a failure the kit answers included), finds the visitor, calls the site, turns a refusal into
the HTML error page and writes the answer. The pages are served by the kit's app like every
service's routes, so the site's answers pass through here rather than through an error handler
of its own app.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import falcon

from common import i18n
from common.errors import FeedbackError
from common.public_api import CLIENT_HEADER
from web import shapes
from web.api import ApiError
from web.contract import LANGUAGE_COOKIE, LANGUAGE_SECONDS, SECURITY_HEADERS
from web.shapes import Asset, Json, Languages, Page, Redirect


def form(req) -> dict:
    """The request's form fields (the kit has read the body once, to check its signature)."""
    body = req.context.get("body")
    if body is None:
        body = req.bounded_stream.read()
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def query(req) -> dict:
    """The query's parameters, the first value of a repeated one."""
    return {k: (v[0] if isinstance(v, list) else v) for k, v in req.params.items()}


def origin(req) -> str:
    """Where the visitor's browser is (scheme://host), as the gateway forwards it."""
    scheme = req.get_header("X-Forwarded-Proto") or req.scheme
    return f"{scheme}://{req.get_header('X-Forwarded-Host') or req.netloc}"


def languages_of(req) -> Languages:
    """What in the request says which language to answer in (``Site.locale`` decides)."""
    asked, cookie = req.get_param("lang"), req.cookies.get(LANGUAGE_COOKIE)
    return Languages(asked=asked if i18n.is_locale(asked) else None, cookie=cookie if i18n.is_locale(cookie) else None,
                     accept=req.get_header("Accept-Language"))


def refusal(ex: Exception) -> Page:
    """The error page of a refusal: the site's own (the kit's errors) or the API's."""
    if isinstance(ex, FeedbackError):
        return shapes.error_page(falcon.http_status_to_code(ex.status), ex.message)
    status = ex.status if 400 <= ex.status < 600 else 502  # an API that answered oddly is a bad gateway
    return shapes.error_page(status, ex.message, ex.code)  # its message is English; its code, the reader's words


class PageResource:
    def __init__(self, context):
        self.site = context.site
        self.templates = context.templates

    def respond(self, req, resp, slug, action, *args, public: bool = False) -> None:
        """Answer with ``action(visitor, *args)``, the site's method for this request.

        ``public``: an answer the same for every visitor (a stylesheet, a script), so the
        visitor's cookies are neither read nor set and browsers may cache it."""
        resp.set_headers(SECURITY_HEADERS)
        cookies, client = {} if public else req.cookies, req.get_header(CLIENT_HEADER)
        languages = Languages() if public else languages_of(req)
        try:
            visitor = self.site.visitor(slug, cookies, client, origin(req), languages)
        except ApiError as ex:  # who is signed in could not be checked: say so, to nobody in particular
            visitor = self.site.anonymous(slug, cookies, client, languages)
            with i18n.using(self.site.locale(visitor)):
                self._answer(req, resp, visitor, refusal(ex), public)
            return
        if public:
            self._answer(req, resp, visitor, self._try(action, visitor, *args), public)
            return
        with i18n.using(self.site.locale(visitor)) as language:
            if languages.asked == language.tag and languages.asked != languages.cookie:
                # A shared link's language stays this browser's choice on the pages it goes on to.
                visitor.cookies.append((LANGUAGE_COOKIE, language.tag, LANGUAGE_SECONDS))
            self._answer(req, resp, visitor, self._try(action, visitor, *args), public)

    @staticmethod
    def _try(action, visitor, *args):
        try:
            return action(visitor, *args)
        except (FeedbackError, ApiError) as ex:
            return refusal(ex)

    def _answer(self, req, resp, visitor, answer, public: bool) -> None:
        """Write ``answer``, in the language of the moment (``common.i18n.using``)."""
        if not public:
            self._set_cookies(req, resp, visitor.cookies)
        if isinstance(answer, Asset):
            resp.content_type = answer.content_type
            resp.cache_control = ["public", f"max-age={answer.max_age}"]
            resp.data = answer.body
            return
        resp.cache_control = ["no-store"]
        if isinstance(answer, Json):
            resp.status = answer.status
            resp.media = answer.body
            if answer.filename:
                resp.downloadable_as = answer.filename
            return
        resp.content_type = falcon.MEDIA_HTML
        if isinstance(answer, Redirect):
            resp.status = falcon.HTTP_303
            resp.location = answer.location
            resp.text = ""
            return
        # ``here``: the page's own address, where the footer's theme form comes back to (a page
        # answering a POST has none to come back to: the form goes back to the board). The
        # branding read for the language (``Site.locale``) names the workspace on an error page too.
        context = {"slug": visitor.slug, "base": f"/b/{visitor.slug}", "visitor": visitor, "branding": visitor.branding,
                   "here": req.relative_uri if req.method == "GET" else None, **answer.context}
        resp.status = answer.status
        resp.text = self.templates.get_template(answer.template).render(**context)

    @staticmethod
    def _set_cookies(req, resp, cookies) -> None:
        secure = (req.get_header("X-Forwarded-Proto") or req.scheme) == "https"
        for name, value, max_age in cookies:
            if value is None:
                resp.unset_cookie(name, path="/")
            else:
                resp.set_cookie(name, value, max_age=max_age, path="/", secure=secure, http_only=True, same_site="Lax")


class Board(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.board, query(req))


class PostPage(PageResource):
    def on_get(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.post, postId, query(req))


class Vote(PageResource):
    def on_post(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.vote, postId, form(req))


class Comment(PageResource):
    def on_post(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.comment, postId, form(req))


class PostEdit(PageResource):
    """Its author edits a post (and the team, as it may): a form, then the post page."""

    def on_get(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.post_edit_form, postId)

    def on_post(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.post_edit, postId, form(req))


class PostDelete(PageResource):
    """GET: the confirmation step (works without script); POST: the deletion."""

    def on_get(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.delete_confirm, postId)

    def on_post(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.delete, postId, form(req))


class CommentEdit(PageResource):
    def on_get(self, req, resp, slug, postId, commentId):
        self.respond(req, resp, slug, self.site.comment_edit_form, postId, commentId)

    def on_post(self, req, resp, slug, postId, commentId):
        self.respond(req, resp, slug, self.site.comment_edit, postId, commentId, form(req))


class CommentDelete(PageResource):
    def on_get(self, req, resp, slug, postId, commentId):
        self.respond(req, resp, slug, self.site.delete_confirm, postId, commentId)

    def on_post(self, req, resp, slug, postId, commentId):
        self.respond(req, resp, slug, self.site.delete, postId, form(req), commentId)


class Triage(PageResource):
    def on_post(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.triage, postId, form(req))


class Follow(PageResource):
    def on_post(self, req, resp, slug, postId):
        self.respond(req, resp, slug, self.site.follow, postId, form(req))


class Roadmap(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.roadmap, query(req))


class Changelog(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.changelog, query(req))


class NewPost(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.new_post_form, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.submit, form(req))


class Boards(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.create_board, form(req))


class Sso(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.sso_confirm, req.get_param("token") or "")

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.sso, form(req))


class SignOut(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.sign_out, form(req))


class SignIn(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.sign_in_form, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.sign_in_email, form(req))


class EmailLink(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.email_link, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.email_link_redeem, form(req))


class OidcStart(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.oidc_start, query(req))


class OidcCallback(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.oidc_callback, query(req))


class PasskeyOptions(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.passkey_options, form(req))


class PasskeySignIn(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.passkey_sign_in, form(req))


class Join(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.join_page, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.join, form(req))


class Account(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.account, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.account_update, form(req))


class MyData(PageResource):
    """GET: the visitor's data as a file; POST: erase them (the API's /v1/me/data)."""

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.my_data)

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.erase_me, form(req))


class PasskeyRegistrationOptions(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.passkey_registration_options, form(req))


class Passkeys(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.passkey_register, form(req))


class PasskeyRemove(PageResource):
    def on_post(self, req, resp, slug, passkeyId):
        self.respond(req, resp, slug, self.site.passkey_remove, passkeyId, form(req))


class SignOutEverywhere(PageResource):
    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.sign_out_everywhere, form(req))


class Notifications(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.notifications, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.notifications_update, form(req))


class Unsubscribe(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.unsubscribe_page, query(req))

    def on_post(self, req, resp, slug):
        # The token is in the link's query (a mail provider's one-click POST keeps the URL as
        # the List-Unsubscribe header gives it); the page's own button posts to the same URL.
        self.respond(req, resp, slug, self.site.unsubscribe, query(req))


class ManagerSignIn(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.manager_sign_in)


class ThemeCss(PageResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.site.theme_css, public=True)


class Static(PageResource):
    def on_get(self, req, resp, slug, name):
        self.respond(req, resp, slug, self.site.static_file, name, public=True)
