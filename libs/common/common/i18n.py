"""Languages: every word the platform shows a person, in that person's locale (docs/languages.md).

The words are gettext catalogs (Babel): the messages of the code are extracted into
``locales/messages.pot`` (``make messages``), and each locale has its own
``locales/<locale>/LC_MESSAGES/messages.po``, read as it is (no compiled file to keep in step).
Plurals follow each locale's CLDR rules (the catalog's ``Plural-Forms``: one form in Japanese,
three in Polish, six in Arabic); dates, relative times and numbers are formatted by Babel from
CLDR.

The locale of the work at hand is a context variable (``using``): a page's request, a mail being
written. ``gettext`` and friends read it, so code and templates say ``_("Sign in")`` wherever
they are. A message with values names them: ``_("Signed in as %(name)s", name=...)``; a literal
``%`` in such a message is written ``%%``.

A pseudo-locale (``en-XA``: accented, 40% longer, bracketed) shows a translator and the tests
any word left out of the catalogs and any layout that cannot take longer words.
"""

from __future__ import annotations

import gettext as _gettext
import io
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from importlib.resources import files
from typing import Iterable, Iterator

from babel import Locale
from babel.dates import format_date, format_time, format_timedelta
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import LazyProxy, Translations

# The locales the platform speaks: BCP 47 tag -> the language's own name (what a person picks).
LOCALES: dict[str, str] = {
    "en": "English",
    "de": "Deutsch",
    "fr": "Français",
    "es": "Español",
    "pt-BR": "Português (Brasil)",
    "it": "Italiano",
    "nl": "Nederlands",
    "pl": "Polski",
    "ja": "日本語",
    "zh-CN": "简体中文",
    "ko": "한국어",
    "ar": "العربية",
}
DEFAULT = "en"  # the source language of every message, and a workspace's default locale
PSEUDO = "en-XA"  # the translators' pseudo-locale: never offered, reachable by ?lang=en-XA
DOMAIN = "messages"
CATALOGS = files("common") / "locales"


def babel_id(tag: str) -> str:
    """A tag as Babel and the catalogs' folders name it: ``pt-BR`` -> ``pt_BR``."""
    return tag.replace("-", "_")


def is_locale(tag: object) -> bool:
    return isinstance(tag, str) and (tag in LOCALES or tag == PSEUDO)


@dataclass(frozen=True)
class Language:
    """One locale's words and formats."""

    tag: str  # BCP 47, as <html lang> says it
    translations: _gettext.NullTranslations
    babel: Locale

    @property
    def direction(self) -> str:
        """``rtl`` for a language written right to left (Arabic), else ``ltr``."""
        return "rtl" if self.babel.character_order == "right-to-left" else "ltr"

    @property
    def name(self) -> str:
        return LOCALES.get(self.tag, self.tag)


@lru_cache(maxsize=None)
def language(tag: str) -> Language:
    """The locale ``tag`` (one of LOCALES, or PSEUDO); anything else is the default's."""
    if tag == PSEUDO:
        return Language(PSEUDO, Pseudo(), Locale.parse("en"))
    if tag not in LOCALES:
        tag = DEFAULT
    return Language(tag, _translations(tag), Locale.parse(babel_id(tag)))


def _translations(tag: str) -> _gettext.NullTranslations:
    if tag == DEFAULT:
        return _gettext.NullTranslations()
    source = CATALOGS / babel_id(tag) / "LC_MESSAGES" / f"{DOMAIN}.po"
    with source.open("rb") as f:
        catalog = read_po(f, locale=babel_id(tag), domain=DOMAIN)
    for message in list(catalog):
        # A plural with a form not yet translated would compile to English forms in the wrong
        # places ("1 updates"): left out whole, it shows in English, right.
        if message.id and isinstance(message.string, tuple) and not all(message.string):
            catalog.delete(message.id, message.context)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)  # fuzzy (unreviewed) entries are left out: English shows instead
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


_current: ContextVar[str] = ContextVar("locale", default=DEFAULT)


def current() -> Language:
    """The locale of the work at hand."""
    return language(_current.get())


@contextmanager
def using(tag: str | None) -> Iterator[Language]:
    """Work in the locale ``tag`` (the default's when None or unknown) until the block ends."""
    chosen = language(tag if is_locale(tag) else DEFAULT)
    token = _current.set(chosen.tag)
    try:
        yield chosen
    finally:
        _current.reset(token)


def gettext(message: str, **values) -> str:
    """``message`` in the current locale, its ``%(name)s`` filled from ``values``."""
    text = current().translations.gettext(message)
    return text % values if values else text


def ngettext(singular: str, plural: str, n: int, **values) -> str:
    """The form of ``singular``/``plural`` the current locale uses for ``n``; ``%(num)s`` is
    ``n`` formatted for the locale."""
    text = current().translations.ngettext(singular, plural, n)
    return text % {"num": number(n), **values}


def pgettext(context: str, message: str, **values) -> str:
    """``message`` told apart by ``context`` where one English word has two meanings."""
    text = current().translations.pgettext(context, message)
    return text % values if values else text


_ = gettext


def N_(message: str) -> str:
    """Marks ``message`` for the catalogs where it is defined; it is translated where shown (``_(name)``)."""
    return message


# Counts that meet every CLDR plural category of every locale the platform speaks (Arabic's zero,
# two, few and many; Polish's few and many; French's many for a million).
PLURAL_SAMPLES = (0, 1, 2, 3, 5, 11, 21, 22, 25, 100, 101, 102, 111, 1_000_000)


def plural_forms(singular: str, plural: str) -> dict[str, str]:
    """Each form of a plural message in the current locale, its values not filled in, by the
    CLDR category of the counts it is said for: the categories a browser's
    ``Intl.PluralRules(locale).select(n)`` names, so a script picks a form without evaluating any
    rule sent to it."""
    language = current()
    forms: dict[str, str] = {}
    for n in PLURAL_SAMPLES:
        forms.setdefault(language.babel.plural_form(n), language.translations.ngettext(singular, plural, n))
    # Every language has "other"; in some (Polish) only fractions are in it, which no count here
    # is: the general plural stands in.
    forms.setdefault("other", language.translations.ngettext(singular, plural, 5))
    return forms


def lazy_gettext(message: str, **values) -> LazyProxy:
    """``message`` translated when it is used, in the locale of that moment (a module's constant)."""
    return LazyProxy(gettext, message, enable_cache=False, **values)


# ---- formats -------------------------------------------------------------------------------

def number(n: int | float) -> str:
    """``n`` as the locale writes it: ``3`` rather than ``3.0``, at most two decimals, grouped
    (1,234.5 / 1.234,5)."""
    return format_decimal(0 if round(n, 2) == 0 else n, format="#,##0.##", locale=current().babel)


def _parse(iso: str | None) -> datetime | None:
    try:
        when = datetime.fromisoformat((iso or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def date(iso: str | None, form: str = "medium") -> str:
    """The day of ``iso`` (an API timestamp) as the locale writes it: "Nov 27, 2026", "27.11.2026"."""
    when = _parse(iso)
    return format_date(when, form, locale=current().babel) if when else (iso or "")[:10]


def exact(iso: str | None) -> str:
    """``iso`` as an exact time in UTC, as the locale writes it."""
    when = _parse(iso)
    if when is None:
        return iso or ""
    locale, when = current().babel, when.astimezone(timezone.utc)
    shown = str(locale.datetime_formats["medium"]).format(format_time(when, "short", locale=locale),
                                                          format_date(when, "medium", locale=locale))
    return shown + " UTC"


def relative(iso: str | None, now: datetime | None = None) -> str:
    """``iso`` as people say it in the locale: "5 minutes ago", "vor 3 Tagen"; under a minute,
    and a time ahead, as "just now"."""
    when = _parse(iso)
    if when is None:
        return (iso or "")[:10]
    delta = when - (now or datetime.now(timezone.utc))
    if delta.total_seconds() > -60:
        return gettext("just now")
    return format_timedelta(delta, threshold=1, add_direction=True, locale=current().babel)


# ---- which locale ------------------------------------------------------------------------------

_RANGE = re.compile(r"\s*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)\s*(?:;\s*q\s*=\s*([01](?:\.\d{0,3})?))?\s*")


def accepted(header: str | None) -> list[str]:
    """The language ranges of an ``Accept-Language`` header, most wanted first (RFC 9110)."""
    ranges = []
    for position, part in enumerate((header or "")[:1024].split(",")[:32]):
        found = _RANGE.fullmatch(part)
        if not found:
            continue
        q = float(found.group(2)) if found.group(2) else 1.0
        if q > 0:
            ranges.append((-q, position, found.group(1)))
    return [tag for _q, _p, tag in sorted(ranges)]


def best(header: str | None, enabled: Iterable[str]) -> str | None:
    """The enabled locale a browser's ``Accept-Language`` prefers, or None: a range names a
    locale exactly (``pt-BR``), or by its language alone (``de-AT`` -> ``de``, ``pt`` -> ``pt-BR``,
    ``zh-Hans`` -> ``zh-CN``)."""
    enabled = [t for t in enabled if t in LOCALES]
    by_tag = {t.lower(): t for t in enabled}
    by_language: dict[str, str] = {}
    for t in enabled:
        by_language.setdefault(t.split("-")[0].lower(), t)
    for wanted in accepted(header):
        wanted = wanted.lower()
        if wanted in by_tag:
            return by_tag[wanted]
        if wanted.split("-")[0] in by_language:
            return by_language[wanted.split("-")[0]]
    return None


def choose(*, asked: str | None = None, chosen: str | None = None, accept_language: str | None = None,
           enabled: Iterable[str] = (), default: str | None = None) -> str:
    """The locale to answer in: a link's ``?lang=`` (``asked``), else the person's own choice
    (``chosen``), both among the ``enabled``; else the browser's ``Accept-Language`` among them;
    else the workspace's ``default``; else English."""
    enabled = [t for t in enabled if t in LOCALES] or list(LOCALES)
    for tag in (asked, chosen):
        if tag == PSEUDO or (tag in enabled):
            return tag
    return best(accept_language, enabled) or (default if default in LOCALES else DEFAULT)


# ---- the pseudo-locale ------------------------------------------------------------------------

_ACCENTED = dict(zip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                     "åƀçđéƒĝĥîĵķļɱñöþǫŕšţûṽŵẋýžÅƁÇĐÉƑĜĤÎĴĶĻṀÑÖÞǪŔŠŢÛṼŴẊÝŽ"))
# What a message keeps as it is: its placeholders, markup and entities.
_KEPT = re.compile(r"%\([a-z_]+\)[sd]|%%|%[sd]|<[^>]*>|&[a-z#0-9]+;|\{[a-z_]+\}")


def pseudo(message: str) -> str:
    """``message`` accented, 40% longer and bracketed, placeholders and markup kept."""
    out, last, letters = [], 0, 0
    for kept in _KEPT.finditer(message):
        chunk = message[last:kept.start()]
        out.append("".join(_ACCENTED.get(c, c) for c in chunk))
        letters += len(chunk)
        out.append(kept.group(0))
        last = kept.end()
    tail = message[last:]
    out.append("".join(_ACCENTED.get(c, c) for c in tail))
    letters += len(tail)
    padding = "·" * max(1, round(letters * 0.4))
    return "⟦" + "".join(out) + padding + "⟧"


class Pseudo(_gettext.NullTranslations):
    def gettext(self, message):
        return pseudo(message)

    def ngettext(self, singular, plural, n):
        return pseudo(singular if n == 1 else plural)

    def pgettext(self, context, message):
        return pseudo(message)

    def npgettext(self, context, singular, plural, n):
        return pseudo(singular if n == 1 else plural)


# ---- templates ---------------------------------------------------------------------------------

def install(env) -> None:
    """Give a Jinja2 environment the current locale's words: ``{% trans %}``, ``_()``,
    ``gettext``, ``ngettext`` and ``pgettext`` (newstyle: values by name, escaped in HTML), and
    ``lang`` and ``dir`` for ``<html>``."""
    env.add_extension("jinja2.ext.i18n")
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_callables(
        gettext=lambda message: current().translations.gettext(message),
        ngettext=lambda singular, plural, n: current().translations.ngettext(singular, plural, n),
        pgettext=lambda context, message: current().translations.pgettext(context, message),
        npgettext=lambda context, singular, plural, n: current().translations.npgettext(context, singular, plural, n),
        newstyle=True,
    )
    # A word that may be the team's own (a status's name): translated when it is one of the
    # catalog's (the defaults), and escaped as any value, unlike ``_()``, whose message is trusted markup.
    env.filters["translated"] = lambda text: current().translations.gettext(str(text)) if text else ""
    env.globals["current_language"] = current
    env.globals["LOCALES"] = LOCALES
    env.filters["number"] = lambda n: number(n) if isinstance(n, (int, float)) else n
    env.filters["date"] = date
    env.filters["relative"] = relative
    env.filters["exact"] = exact
