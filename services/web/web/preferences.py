"""The visitor's own preferences, kept in their browser: light, dark or their system's theme.

The choice is a cookie (``THEME_COOKIE``) the server reads on every page (``Site.visitor``), so
the first paint is already in the chosen theme: no flash, and no inline script (the CSP allows
none). Without a choice the workspace's branding theme applies. The footer's form works without
JavaScript (POST, then 303 back to the page it was sent from); site.js switches in place and
writes the same cookie, which is why it is not HttpOnly.
"""

from __future__ import annotations

import falcon

from common.errors import BadRequest
from web.contract import SECURITY_HEADERS
from web.resources import PageResource, form

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
        raise BadRequest("choose a theme: light, dark or system")
