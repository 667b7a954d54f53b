"""The visitor's own preferences, kept in their browser: light, dark or their system's theme,
and the language the board speaks to them.

The choice is a cookie (``THEME_COOKIE``) the server reads on every page (``Site.visitor``), so
the first paint is already in the chosen theme: no flash, and no inline script (the CSP allows
none). Without a choice the workspace's branding theme applies. The footer's form works without
JavaScript (POST, then 303 back to the page it was sent from); site.js switches in place and
writes the same cookie, which is why it is not HttpOnly.

The language is a cookie too (``contract.LANGUAGE_COOKIE``, HttpOnly: only the server reads it),
chosen in the footer among the workspace's enabled languages; a signed-in person's choice is also
kept as theirs (``PATCH /v1/me {"locale"}``), so their mails and their other browsers follow it.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import falcon

from common import i18n
from common.errors import BadRequest
from common.i18n import _
from web.api import ApiError
from web.contract import LANGUAGE_COOKIE, LANGUAGE_SECONDS, SECURITY_HEADERS
from web.resources import PageResource, form
from web.shapes import Redirect

log = logging.getLogger(__name__)

THEME_COOKIE = "fb_theme"
THEMES = ("light", "dark", "system")
THEME_SECONDS = 365 * 24 * 3600


def chosen_theme(cookies: dict) -> str | None:
    """The theme this browser chose, or None (the workspace's applies)."""
    value = cookies.get(THEME_COOKIE)
    return value if value in THEMES else None


def back_to(slug: str, target: str | None) -> str:
    """Where to send the visitor after choosing: ``target`` when it is a page of this board (a
    path, not another site's address), else the board."""
    base = f"/b/{slug}"
    if target and (target == base or target.startswith((base + "/", base + "?"))) \
            and "//" not in target and "\\" not in target and not any(c.isspace() or ord(c) < 32 for c in target):
        return target
    return base


class Theme(PageResource):
    """``POST /b/{slug}/theme`` with ``theme`` (light|dark|system) and ``next``.

    No CSRF token: the form changes nothing but how this browser draws the site (a cookie no
    server-side rule reads), so a forged post could at most switch a visitor's colours, which
    they switch back with one click; SameSite=Lax keeps other sites' posts from carrying the
    visitor's other cookies anyway. Asking for a token would need the visitor's session lookup
    on a request that otherwise needs no API call, and would make a cached page's toggle fail."""

    def on_post(self, req, resp, slug):
        fields = form(req)
        theme = fields.get("theme")
        if theme not in THEMES:
            self.respond(req, resp, slug, self.refuse)  # the site's error page, in the visitor's theme
            return
        resp.set_headers(SECURITY_HEADERS)
        resp.cache_control = ["no-store"]
        secure = (req.get_header("X-Forwarded-Proto") or req.scheme) == "https"
        resp.set_cookie(THEME_COOKIE, theme, max_age=THEME_SECONDS, path="/", secure=secure, http_only=False,
                        same_site="Lax")
        resp.status = falcon.HTTP_303
        resp.location = back_to(slug, fields.get("next"))
        resp.content_type = falcon.MEDIA_HTML
        resp.text = ""

    @staticmethod
    def refuse(visitor):
        raise BadRequest(_("choose a theme: light, dark or system"))


def choose_language(site, visitor, fields: dict) -> Redirect:
    """The footer's language form: ``locale`` must be one of the workspace's enabled languages
    (else the error page, 400). It becomes this browser's (the cookie) and, for a signed-in
    person, theirs (``PATCH /v1/me``: their mails and other browsers follow it); a refusal of
    that call still leaves the browser's choice. Then 303 back to ``next`` without its
    ``?lang=``, which would otherwise outrank the choice just made."""
    tag = fields.get("locale") or ""
    enabled = site.branding(visitor).get("locales") or list(i18n.LOCALES)
    if tag not in enabled or tag not in i18n.LOCALES:
        raise BadRequest(_("Choose one of this board's languages."))
    if visitor.kind != "anonymous":
        # A person's saved choice changes what they get elsewhere: only from a form of this site.
        site.check_csrf(visitor, fields)
        try:
            site.api.call("PATCH", "/me", visitor.identity, payload={"locale": tag})
        except ApiError as ex:
            log.warning("could not keep a person's language: %s %s", ex.status, ex.message)
    visitor.cookies.append((LANGUAGE_COOKIE, tag, LANGUAGE_SECONDS))
    return Redirect(without_lang(back_to(visitor.slug, fields.get("next"))))


def without_lang(target: str) -> str:
    """``target`` (a path of this site) without its ``lang`` query parameter."""
    parts = urlsplit(target)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(k == "lang" for k, _v in pairs):
        return target
    return urlunsplit(("", "", parts.path, urlencode([(k, v) for k, v in pairs if k != "lang"]), parts.fragment))


class Language(PageResource):
    """``POST /b/{slug}/language`` with ``locale``, ``next`` and ``csrf`` (the footer's form).

    The token is checked only for a signed-in person, whose choice is saved with them: for
    anyone else the form changes nothing but the language this browser is answered in (a cookie,
    as the theme's), and a visitor without cookies yet has no token to send."""

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, lambda visitor, fields: choose_language(self.site, visitor, fields), form(req))
