"""What the board site promises outside itself: the cookies it keeps in browsers and the headers
on every answer.

Small on purpose. A core service's contract is mostly its topic and events; the site publishes
no event and consumes none, so it declares no topic. It reads and writes only through the public
``/v1`` API, as its visitors, so what it depends on is that API's own contract (the kit's
``common.public_api``). Its pages are declared where every service declares its routes
(``plugin.PAGES``); the form fields and query parameters it decides on itself are in
``schemas.py``.
"""

# The signed anonymous id of a browser (one year); the people service's session token of a
# signed-in visitor; the state of an OpenID Connect sign-in this browser started (ten minutes).
ANON_COOKIE = "fb_anon"
SESSION_COOKIE = "fb_session"
OIDC_COOKIE = "fb_oidc"
# An idea an anonymous visitor typed and was asked to sign in to post (an hour; compressed,
# signed, bound to its workspace): the submit form is filled with it again after signing in.
DRAFT_COOKIE = "fb_draft"
# The language this browser chose (the footer's form, or a link's ``?lang=``; one year): a tag of
# ``common.i18n``. A signed-in person's own choice is kept with them as well (``PATCH /v1/me``).
LANGUAGE_COOKIE = "fb_lang"
LANGUAGE_SECONDS = 365 * 24 * 3600

# Every answer of the site carries these (pages, redirects, error pages, stylesheets, scripts):
# no inline script or style, no framing, no content sniffing.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
