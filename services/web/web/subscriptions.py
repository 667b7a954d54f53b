"""The changelog by email on the board: the changelog page's "Get updates by email" form, and
the pages its mails link to (``/changelog/confirm``, ``/changelog/unsubscribe``).

Everything goes to the notifications service's API as the visitor (its rate limits are theirs):
``POST .../changelog/subscriptions`` for an address anyone types (double opt-in: the address gets
a link to confirm), ``PUT .../me/changelog-subscription`` for a signed-in person's own address
(one click, no mail to confirm). Plain forms with the site's CSRF token, answered by a redirect
to the changelog page with a notice: no script needed.

A mail's links are opened by mail scanners and link previews, so a GET of them changes
nothing: it shows a page with one button that POSTs. The unsubscribe URL also takes a mail
provider's one-click POST (RFC 8058) without a CSRF token, as ``/unsubscribe`` does: the signed
token is the authority and it can only ever unsubscribe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from common import i18n
from common.errors import BadRequest
from common.i18n import N_, _
from web.api import ApiError
from web.resources import PageResource, form, query
from web.shapes import Page, Redirect

TOKEN = re.compile(r"[A-Za-z0-9_.-]{10,1000}")
EMAIL_MAX = 254
# The notice the changelog page shows after the form, by the ``subscribe`` query parameter
# (marked for the catalogs here, translated where shown).
NOTICES = {
    # The same words whether the address was subscribed already or not: the page reveals nobody.
    "sent": N_("Thanks! If that address is not subscribed yet, we have emailed it a link: follow it to confirm, "
               "and you will get each new changelog entry by email."),
    "on": N_("You are subscribed: each new changelog entry will be emailed to you."),
    "off": N_("You are unsubscribed: no more changelog emails will be sent to you."),
}
INVALID_CONFIRM = N_("This confirmation link is not valid, or has expired (links work for 7 days). "
                     "Subscribe again below the changelog to get a new one.")
INVALID_UNSUBSCRIBE = N_("This unsubscribe link is not valid for this board: it may have been cut short when it was "
                         "copied. Use the link at the end of the latest changelog email.")


def form_state(site, visitor, params: dict) -> dict:
    """What the changelog page's form shows: the notice after a subscription, and, for a
    signed-in person, their own address and whether it gets the changelog (``mine``; None for
    anyone else, who gets the form with an email field)."""
    mine = None
    if visitor.kind != "anonymous":
        try:
            mine = site._call(visitor, "GET", "/me/changelog-subscription")
        except ApiError as ex:
            if ex.status not in (400, 401, 403, 404):  # no address to mail, or no notifications plugin
                raise
    notice = NOTICES.get(params.get("subscribe") or "")
    return {"subscribe_notice": _(notice) if notice else None, "subscribe_mine": mine,
            "subscribe_error": None, "subscribe_email": ""}


def subscribe(site, visitor, fields: dict):
    """The form's POST: a typed address (double opt-in), or a signed-in person's own (one click)."""
    site.check_csrf(visitor, fields)
    changelog = f"/b/{visitor.slug}/changelog"
    action = fields.get("action") or "email"
    if action in ("me", "stop"):
        try:
            site._call(visitor, "PUT", "/me/changelog-subscription", payload={"subscribed": action == "me"})
        except ApiError as ex:
            if ex.status == 401:
                return site.sign_in_needed(visitor, "subscribe", changelog)
            raise
        return Redirect(f"{changelog}?subscribe={'on' if action == 'me' else 'off'}#subscribe")
    if action != "email":
        raise BadRequest(_("This form's action is not one the changelog knows."))
    email = (fields.get("email") or "").strip()[:EMAIL_MAX]
    try:
        site._call(visitor, "POST", "/changelog/subscriptions", payload={"email": email, "locale": i18n.current().tag})
    except ApiError as ex:
        if ex.status != 400:
            raise
        page = site.changelog(visitor, {})
        return Page(page.template, {**page.context, "subscribe_error": _said(ex.message), "subscribe_email": email}, 400)
    return Redirect(f"{changelog}?subscribe=sent#subscribe")


def _said(message: str) -> str:
    """The API's refusal as the form says it: the address is what was wrong."""
    return _("Enter an email address, like name@example.com.") if "email" in (message or "") else message


@dataclass(frozen=True)
class MailedLink:
    """A link a mail carries with its signed token: opened (GET), a page with one button and
    nothing changed; its button (POST), the step taken at the API, or the page again saying the
    link is not valid (400)."""

    template: str
    api_path: str
    invalid: str

    def show(self, site, visitor, params: dict) -> Page:
        token = params.get("token") or ""
        if not TOKEN.fullmatch(token):
            return self._page(site, visitor, error=self.invalid, status=400)
        return self._page(site, visitor, token=token)

    def take(self, site, visitor, params: dict) -> Page:
        token = params.get("token") or ""
        if TOKEN.fullmatch(token):
            try:
                site._call_anonymously(visitor, "POST", self.api_path, {"token": token})
                return self._page(site, visitor, done=True)
            except ApiError as ex:
                if ex.status != 400:
                    raise
        return self._page(site, visitor, error=self.invalid, status=400)

    def _page(self, site, visitor, token: str = "", error: str | None = None, done: bool = False, status: int = 200) -> Page:
        return Page(self.template, {**site._common(visitor), "token": token, "error": _(error) if error else None,
                                    "done": done}, status)


# The confirmation's button needs no CSRF token: the signed, expiring token is the authority (it
# names the address it was mailed to), and it can only confirm that address. The unsubscribe
# URL's POST is also a subscriber mail's one-click unsubscribe (RFC 8058: the mail provider POSTs
# the List-Unsubscribe URL, token in its query).
CONFIRMING = MailedLink("changelog_confirm.html", "/changelog/subscriptions/confirm", INVALID_CONFIRM)
UNSUBSCRIBING = MailedLink("changelog_unsubscribe.html", "/changelog/subscriptions/unsubscribe", INVALID_UNSUBSCRIBE)


class Subscribe(PageResource):
    """POST /b/{slug}/changelog/subscribe: the changelog page's form."""

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, lambda visitor, fields: subscribe(self.site, visitor, fields), form(req))


class MailedLinkPage(PageResource):
    link: MailedLink

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, lambda visitor, params: self.link.show(self.site, visitor, params), query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, lambda visitor, params: self.link.take(self.site, visitor, params), query(req))


class Confirm(MailedLinkPage):
    """GET /b/{slug}/changelog/confirm?token=: a page with a button; POST: the subscription confirmed."""

    link = CONFIRMING


class Unsubscribe(MailedLinkPage):
    """GET /b/{slug}/changelog/unsubscribe?token=: a page with a button; POST: unsubscribed (also RFC 8058's one click)."""

    link = UNSUBSCRIBING
