"""Settings and branding: the workspace's name and logo, its primary colour (with a contrast
warning), theme, "Powered by", what anonymous visitors may do, whether authors vote for their
own posts, the languages people may see the workspace in and the default one, the brand voice,
and the SSO secret (generated here and shown once, on the answer to
that form only; afterwards the page says only whether one is set).

The logo is uploaded with a multipart form (the site's other forms are urlencoded): the image is
sent on as the body of ``PUT /v1/workspaces/{slug}/logo``."""

from __future__ import annotations

import io
import json
from urllib.parse import parse_qsl, quote

import falcon
import urllib3
from falcon.media import MultipartFormHandler

from babel.numbers import format_decimal

from common import colors, i18n
from common.errors import BadRequest
from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

# Labels are the English words (N_), translated where the page shows them.
THEMES = (("light", N_("Light")), ("dark", N_("Dark")), ("system", N_("Follow the visitor's system")))
# What becomes of an erased person's posts and comments (docs/privacy.md).
ERASED_CHOICES = (("keep", N_("kept, written by “Deleted user”")), ("delete", N_("deleted")))
FLAGS = (
    ("anonSubmit", N_("Anyone may submit ideas without signing in")),
    ("anonVote", N_("Anyone may vote without signing in")),
    ("anonComment", N_("Anyone may comment without signing in")),
    ("authorVotes", N_("A new idea's author votes for it")),
    ("hideCustomerNames", N_("Hide customers' names from other customers (shown as “Customer”; the team still sees them)")),
)
LOGO_TYPES = "image/png,image/jpeg,image/webp,image/svg+xml"
LOGO_MAX_BYTES = 512 * 1024  # the workspaces service's limit
FORM_OVERHEAD = 2048  # a multipart form's boundaries, headers and CSRF field beside the file
# What a redirect's ``?done=`` says: only these (the query never puts text of its own on the page).
DONE = {
    "saved": N_("Settings saved."),
    "logo": N_("Logo uploaded."),
    "logo-removed": N_("Logo removed."),
    "sso-removed": N_("The SSO secret is removed: sign-in links from your app no longer work."),
}
# The settings of the languages fieldset (a refusal naming one is shown beside it).
LANGUAGE_FIELDS = ("locales", "defaultLocale")
# WCAG 2's ratio for normal text: white on the primary colour below it is hard to read.
MIN_CONTRAST = 4.5
MAX_FORM_PARTS = 20


def six_digits(color: str) -> str:
    """``#rgb`` as ``#rrggbb`` (the only spelling ``<input type=color>`` takes); else as it is."""
    if len(color) == 4 and color.startswith("#"):
        return "#" + "".join(c * 2 for c in color[1:]).lower()
    return color.lower()


def contrast_with_white(color: str) -> float | None:
    """The WCAG contrast ratio of white text on ``color`` (``#rgb`` or ``#rrggbb``), None for
    anything else."""
    value = (color or "").strip()
    return colors.contrast(value, colors.WHITE) if colors.HEX.fullmatch(value) else None


def ratio_text(ratio: float) -> str:
    """A contrast ratio's number as the reader's locale writes it, one decimal: "4.5", "4,5"."""
    return format_decimal(ratio, format="0.0", locale=i18n.current().babel)


def contrast_warning(color: str) -> str | None:
    ratio = contrast_with_white(color)
    if ratio is None or ratio >= MIN_CONTRAST:
        return None
    return _("White text on %(color)s has a contrast of %(ratio)s:1, below the %(minimum)s:1 that WCAG asks for text: "
             "buttons in this colour will be hard to read. Choose a darker colour.",
             color=color, ratio=ratio_text(ratio), minimum=ratio_text(MIN_CONTRAST))


def language_refusal(message: str) -> bool:
    """Whether an API refusal of the settings is about the languages (its message names the field)."""
    return any(field in (message or "") for field in LANGUAGE_FIELDS)


def checked_values(req, name: str) -> list[str]:
    """Every value of a repeated form field (checkboxes of one name: ``form`` keeps one only)."""
    body = req.context.get("body") or b""
    return [v for k, v in parse_qsl(body.decode("utf-8", "replace")) if k == name]


class SettingsSection(Section):
    path = "/settings"
    max_logo_bytes = 256 * 1024 - FORM_OVERHEAD  # set from the platform's MAX_BODY_BYTES (SettingsResource)

    def show(self, visitor: Visitor, params: dict, refused: dict | None = None, status: int = 200,
             typed: dict | None = None, new_secret: str | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        settings = self.call(visitor, "GET", "/settings")
        workspace = self.call(visitor, "GET", "")
        values = {**settings, "name": workspace["name"], **(typed or {})}
        values["primaryColor"] = six_digits(values.get("primaryColor") or "")
        contrast = contrast_with_white(values.get("primaryColor") or "")
        return self.page(visitor, "settings.html", {
            "values": values,
            "logo": workspace.get("logo"),
            "has_sso_secret": settings.get("ssoSecret") is not None,
            "new_secret": new_secret,
            "themes": THEMES,
            "flags": FLAGS,
            "erased_choices": ERASED_CHOICES,
            "logo_types": LOGO_TYPES,
            "max_logo_bytes": self.max_logo_bytes,
            "warning": contrast_warning(values.get("primaryColor") or ""),
            "contrast": ratio_text(contrast) if contrast is not None else None,
            "min_contrast": MIN_CONTRAST,
            "locales": i18n.LOCALES,
            "refused": refused or {},
            "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def save(self, visitor: Visitor, form: dict, locales: list[str] | None = None):
        """The main form: the name (the workspace's) and the settings, each as one API call.
        ``locales``: the languages checked (a form without the languages fieldset, one without
        ``defaultLocale``, leaves them as they are)."""
        self.checked(visitor, form)
        typed = {
            "name": (form.get("name") or "").strip(),
            "primaryColor": (form.get("primaryColor") or "").strip().lower(),
            "theme": form.get("theme") or "",
            "hidePoweredBy": form.get("hidePoweredBy") == "on",
            "brandVoice": (form.get("brandVoice") or "").replace("\r\n", "\n"),
            **{name: form.get(name) == "on" for name, _label in FLAGS},
            "erasedUserContent": form.get("erasedUserContent") or "keep",
        }
        if "defaultLocale" in form:
            typed["locales"] = [tag for tag in i18n.LOCALES if tag in (locales or [])]  # the platform's order
            typed["defaultLocale"] = form["defaultLocale"]
        settings = {k: v for k, v in typed.items() if k != "name"}
        try:
            self.call(visitor, "PATCH", "", payload={"name": typed["name"]})
            self.call(visitor, "PATCH", "/settings", payload=settings)
        except ApiError as ex:
            where = "languages" if language_refusal(ex.message) else "settings"
            return self.show(visitor, {}, {where: self.refusal(ex)}, ex.status, typed)
        return self.redirect(visitor, done="saved")

    def upload_logo(self, visitor: Visitor, parts: dict):
        """The logo form: ``parts`` are its fields, the file as ``(content_type, bytes)``."""
        self.checked(visitor, parts)
        content_type, data = parts.get("logo") or ("", b"")
        if not data:
            return self.show(visitor, {}, {"logo": _("Choose an image file to upload.")}, 400)
        try:
            self._put(visitor, "/logo", data, content_type)
        except ApiError as ex:
            return self.show(visitor, {}, {"logo": self.refusal(ex)}, ex.status)
        return self.redirect(visitor, done="logo")

    def remove_logo(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        self.call(visitor, "DELETE", "/logo")
        return self.redirect(visitor, done="logo-removed")

    def sso_secret(self, visitor: Visitor, form: dict):
        """Generate a new secret (shown on this answer only, never in a URL) or remove it."""
        self.checked(visitor, form)
        if form.get("action") == "remove":
            self.call(visitor, "PATCH", "/settings", payload={"ssoSecret": None})
            return self.redirect(visitor, done="sso-removed")
        settings = self.call(visitor, "PATCH", "/settings", payload={"ssoSecret": "generate"})
        return self.show(visitor, {}, new_secret=settings["ssoSecret"])

    def _put(self, visitor: Visitor, path: str, data: bytes, content_type: str):
        """``PUT`` of a body that is not JSON (an image) as the visitor, answered as the site's
        API client answers (``ApiError`` for anything but 2xx)."""
        api = self.site.api
        url = f"{api.base}/v1" + quote(f"/workspaces/{visitor.slug}{path}")
        headers = {"Accept": "application/json", **visitor.identity, "Content-Type": content_type}
        try:
            answer = api.http.request("PUT", url, body=data, headers=headers)
        except urllib3.exceptions.HTTPError as ex:
            raise ApiError(503, f"the API is unavailable ({ex.__class__.__name__})") from None
        if answer.status >= 300:
            try:
                message = json.loads(answer.data or b"null").get("error")
            except (ValueError, AttributeError):
                message = None
            raise ApiError(answer.status, message or f"the API answered {answer.status}")


def multipart(req) -> dict:
    """A multipart form's fields (text as text, a file as ``(content_type, bytes)``), read with
    Falcon's own handler from the body the kit has read once. Not such a form: 400."""
    body = req.context.get("body")
    if body is None:
        body = req.bounded_stream.read()
    if not (req.content_type or "").lower().startswith("multipart/form-data"):
        raise BadRequest(_("This form is sent as multipart/form-data."))
    fields: dict = {}
    try:
        parts = MultipartFormHandler().deserialize(io.BytesIO(body), req.content_type, len(body))
        for count, part in enumerate(parts):
            if count >= MAX_FORM_PARTS:
                raise BadRequest(_("This form has too many fields."))
            if part.filename is not None:
                fields[part.name] = (part.content_type or "", part.get_data())
            else:
                fields[part.name] = part.get_text()
    except falcon.MediaMalformedError:
        raise BadRequest(_("The form could not be read; try again.")) from None
    except falcon.HTTPError as ex:
        raise BadRequest(_("The form could not be read: %(reason)s", reason=ex.title)) from None
    return fields


class SettingsResource(SectionResource):
    """A resource of the page: the largest logo it offers to send is what the gateway lets
    through (``MAX_BODY_BYTES``, less the form's own bytes), up to the API's 512 KiB."""

    section = SettingsSection

    def __init__(self, context):
        super().__init__(context)
        self.admin.max_logo_bytes = min(LOGO_MAX_BYTES, context.settings.max_body_bytes - FORM_OVERHEAD)


class Settings(SettingsResource):

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save, form(req), checked_values(req, "locales"))


class SettingsLogo(SettingsResource):

    def on_post(self, req, resp, slug):
        # Read in the answer, so a form that cannot be read is the site's error page.
        self.respond(req, resp, slug, lambda visitor: self.admin.upload_logo(visitor, multipart(req)))


class SettingsLogoRemove(SettingsResource):

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.remove_logo, form(req))


class SettingsSsoSecret(SettingsResource):

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.sso_secret, form(req))
