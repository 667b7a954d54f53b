"""The widget's words (docs/widget.md, "Languages"): the script says every word through ``_()``
and ``ngettext()``, and the panel's first call (``config``) answers them in the panel's
language, so the script holds no catalog of its own and the words are the platform's one set
of catalogs (``make messages`` extracts the script's with Babel's JavaScript extractor).

Which messages the script says is read from the script itself when the service starts
(``messages``), so the two cannot drift apart. A plural message is answered as its forms by
CLDR plural category (``zero``, ``one``, ``two``, ``few``, ``many``, ``other``), the categories
the browser's ``Intl.PluralRules(locale).select(n)`` names: the script picks a form without
evaluating any rule sent to it.
"""

from __future__ import annotations

import io
from functools import lru_cache
from importlib.resources import files

from babel.messages.extract import DEFAULT_KEYWORDS, extract

from common import i18n

SCRIPT = "v1.js"

Message = str | tuple[str, str]  # a message, or a plural's singular and plural


@lru_cache(maxsize=1)
def messages() -> tuple[Message, ...]:
    """Every message the script says, in the order it first says them."""
    source = (files("widget") / "static" / SCRIPT).read_bytes()
    found: dict[Message, None] = {}
    for _line, message, _comments, _context in extract("javascript", io.BytesIO(source), keywords=DEFAULT_KEYWORDS):
        found.setdefault(message if isinstance(message, str) else (message[0], message[1]), None)
    return tuple(found)


def catalog() -> dict[str, str | dict[str, str]]:
    """The script's messages in the current locale: each message's translation, a plural's
    forms by CLDR category (under its singular)."""
    words: dict[str, str | dict[str, str]] = {}
    for message in messages():
        if isinstance(message, str):
            words[message] = i18n.current().translations.gettext(message)
        else:
            words[message[0]] = i18n.plural_forms(*message)
    return words
