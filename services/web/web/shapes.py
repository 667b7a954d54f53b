"""What the site answers, and what it makes of the API's answers for its templates.

The site's rules (``service.py``) return a :class:`Page` to render, a :class:`Redirect`, a
:class:`Json` or an :class:`Asset`; ``resources.py`` writes it. The functions below turn ``/v1`` answers into what a
template shows, and hold no rule of who may see what: that is the API's.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from urllib.parse import urlencode

import jwt
from babel.dates import format_skeleton

from common import i18n
from common.i18n import N_, _
from common.colors import HEX as HEX_COLOR
from common.colors import long_hex, text_on
from web.schemas import BOARD_SLUG_MAX, TAG_COLOR, TRIAGE_KEY

# Comments deeper than this are shown at this depth (the page stays readable on a phone).
MAX_SHOWN_DEPTH = 6
DEFAULT_COLOR = "#2563eb"


@dataclass(frozen=True)
class Languages:
    """What says which language a request is answered in (``common.i18n.choose``): a link's
    ``?lang=``, this browser's choice (``contract.LANGUAGE_COOKIE``) and its ``Accept-Language``."""

    asked: str | None = None
    cookie: str | None = None
    accept: str | None = None


@dataclass
class Page:
    """A template rendered with ``context`` (beside what every page gets: the visitor, the site's base path)."""

    template: str
    context: dict
    status: int = 200


@dataclass
class Redirect:
    """A 303 to ``location`` (a path of this site), after a form."""

    location: str


@dataclass
class Json:
    """An answer to the site's own script (a passkey ceremony's steps): ``body`` as JSON."""

    body: dict
    status: int = 200
    filename: str | None = None  # offered as a file to save (a person's data), not shown


@dataclass
class Asset:
    """A file the same for every visitor (a stylesheet, a script), cached by browsers for ``max_age`` seconds."""

    body: bytes
    content_type: str
    max_age: int


# What an API refusal means, by its stable ``code`` (common.errors), in the reader's language: the
# API's own message is English (for machines and logs), shown under it as the detail.
API_REFUSALS = {
    "bad_request": N_("What was sent could not be used."),
    "invalid_request": N_("What was sent could not be used."),
    "unauthorized": N_("Sign in to do this."),
    "forbidden": N_("You may not do this."),
    "not_found": N_("There is nothing here: it may have been deleted, or the link may be wrong."),
    "conflict": N_("This changed meanwhile: reload the page and try again."),
    "payload_too_large": N_("What was sent is too large."),
    "rate_limited": N_("Too many requests in a short time: wait a moment and try again."),
    "unavailable": N_("This is not available right now: try again in a moment."),
    "bad_gateway": N_("This is not available right now: try again in a moment."),
    "gateway_timeout": N_("This is not available right now: try again in a moment."),
}


def error_page(status: int, message: str, code: str | None = None) -> Page:
    """The error page: ``message`` is the site's own (in the reader's language); with the API's
    ``code``, ``message`` is the API's, in English. A reader of another language reads first
    what the code means in theirs, the API's words under it as the detail."""
    explained = API_REFUSALS.get(code or "") if i18n.current().tag != i18n.DEFAULT else None
    return Page("error.html", {"message": message, "status": status,
                               "explained": _(explained) if explained else None, "api": code is not None}, status)


def slug_of(name: str) -> str:
    """A board's slug made from its name, as ``site.js`` makes it while the name is typed:
    accents dropped, lower case, every run of other characters one hyphen, none at either end,
    at most ``BOARD_SLUG_MAX`` characters ("Café & Crème" is ``cafe-creme``). Empty when the name
    has no letter or digit of a-z, 0-9."""
    text = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:BOARD_SLUG_MAX].rstrip("-")


def refused_field(status: int, message: str, fields: tuple[str, ...]) -> str | None:
    """Which of a form's ``fields`` an API refusal is about, to mark it invalid: the one its
    message names (the API's ``field 'name' ...``), the slug of a conflict (409: taken already)."""
    if status == 409 and "slug" in fields:
        return "slug"
    named = re.search(r"field '([A-Za-z]+)'", message or "")
    return named.group(1) if named and named.group(1) in fields else None


def thread(comments: list[dict]) -> list[dict]:
    """The API's comments (thread order: a parent before its replies), each with the ``depth``
    it is indented by."""
    depth: dict[str, int] = {}
    for comment in comments:
        depth[comment["id"]] = depth.get(comment["parentId"], -1) + 1 if comment["parentId"] else 0
        comment["depth"] = min(depth[comment["id"]], MAX_SHOWN_DEPTH)
    return comments


def published(entries: list[dict]) -> list[dict]:
    """The changelog's published entries, newest first."""
    return sorted((e for e in entries if e.get("publishedAt")), key=lambda e: e["publishedAt"], reverse=True)


def board_link(slug: str, state: dict, **change) -> str:
    """The board's address with its filters (``state``), some changed; empty ones left out."""
    merged = {**state, **change}
    return f"/b/{slug}?" + urlencode({k: v for k, v in merged.items() if v not in ("", None, 0)})


def theme_css(branding: dict, tags: list[dict] = ()) -> Asset:
    """The workspace's primary colour and its tags' colours as a stylesheet (the CSP allows no
    inline style, so a tag's chip is coloured by its class, ``tag-<slug>``); a value that is not
    a colour, or a slug that is not a plain name, is not written into CSS."""
    color = branding.get("primaryColor") or DEFAULT_COLOR
    if not HEX_COLOR.fullmatch(color):
        color = DEFAULT_COLOR
    # Text and icons on the primary colour (a voted button, a primary button) are black or white,
    # whichever has the larger WCAG contrast with it.
    css = f":root {{ --primary: {color}; --on-primary: {text_on(long_hex(color))}; }}\n"
    for tag in tags:
        slug, background = tag.get("slug"), tag.get("color")
        if isinstance(slug, str) and isinstance(background, str) and TRIAGE_KEY.fullmatch(slug) and TAG_COLOR.fullmatch(background):
            css += f".tag-{slug} {{ background: {background}; border-color: {background}; color: {text_on(background)}; }}\n"
    return Asset(css.encode(), "text/css; charset=utf-8", 60)


def custom_fields(specs: list[dict], values: dict) -> list[dict]:
    """A post's custom field values to show, in the settings' order, each with its field's name,
    its value as text and whether it is internal (the team's only). ``specs`` are the fields the
    caller may see and ``values`` the post's as the API showed them: a value without its field
    is not shown."""
    shown = []
    for spec in specs:
        value = values.get(spec["key"])
        if value is None or value == []:
            continue
        shown.append({"key": spec["key"], "name": spec["name"], "value": field_text(spec["type"], value),
                      "internal": not spec.get("public")})
    return shown


def field_text(kind: str, value) -> str:
    if kind == "checkbox":
        return _("Yes") if value else _("No")
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)
    return str(value)


def number(value) -> str:
    """A number as the reader's locale writes it: ``3`` rather than ``3.0``, at most two
    decimals, grouped (``1,234.5``, ``1.234,5``)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value if value is not None else "")
    return i18n.number(value)


def vote_words() -> dict[str, str]:
    """"%(num)s votes" in each plural form of the reader's language, keyed by its CLDR category,
    "{count}" standing for the number: site.js writes a count it fetched with the form
    ``Intl.PluralRules`` chooses (the same CLDR categories)."""
    forms = i18n.plural_forms("%(num)s vote", "%(num)s votes")
    return {category: form % {"num": "{count}"} for category, form in forms.items()}


def month(eta: str | None) -> str:
    """An ETA (``YYYY-MM``) as a month and year in the reader's locale (``March 2027``, ``März
    2027``); another value as it is."""
    match = re.fullmatch(r"([0-9]{4})-(0[1-9]|1[0-2])", eta or "")
    if not match:
        return eta or ""
    return format_skeleton("yMMMM", date(int(match.group(1)), int(match.group(2)), 1), locale=i18n.current().babel)


def account(token: str) -> dict:
    """Whom a user token names, to show: its claims read without checking the signature, so
    only for a token the API has accepted (or one already kept in a session)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        claims = {}
    name = claims.get("name") if isinstance(claims.get("name"), str) else ""
    user = claims.get("id") or claims.get("email")
    user = str(user) if isinstance(user, (str, int)) else ""
    return {"name": name.strip(), "id": user, "label": name.strip() or user or _("this account")}
