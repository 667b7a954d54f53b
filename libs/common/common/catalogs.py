"""The catalogs' upkeep (``make messages``; docs/languages.md): extract every message of the
code into ``locales/messages.pot`` and bring each locale's ``.po`` in step with it.

Where the messages are is ``babel.cfg`` at the repository's root (Python, the Jinja2 templates
of pages and mails, the widget's script). A message the code no longer says leaves every
catalog; a new one enters each untranslated, for a translator (and the suite's catalog test,
which fails until it is translated). ``python -m common.catalogs`` does it from the root.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

from common import i18n

SOURCES = ("services", "libs/common", "gateway")  # what babel.cfg's patterns are relative to
KEYWORDS = {**DEFAULT_KEYWORDS, "lazy_gettext": None}
COMMENT_TAG = "Translators:"  # a comment so marked above a message is shown to its translators


def extracted(root: Path) -> Catalog:
    """Every message the code under ``root`` says, as a template catalog."""
    with open(root / "babel.cfg", encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f)
    template = Catalog(project="feedback", fuzzy=False)
    for source in SOURCES:
        for filename, lineno, message, comments, context in extract_from_dir(
                root / source, method_map, options_map, keywords=KEYWORDS, comment_tags=(COMMENT_TAG,),
                strip_comment_tags=True):
            template.add(message, None, [(f"{source}/{filename}", lineno)], auto_comments=comments, context=context)
    return template


def po_path(tag: str) -> Path:
    return Path(str(i18n.CATALOGS / i18n.babel_id(tag) / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"))


def read(tag: str) -> Catalog:
    with po_path(tag).open("rb") as f:
        return read_po(f, locale=i18n.babel_id(tag), domain=i18n.DOMAIN)


def render(catalog: Catalog, **options) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=100, no_location=True, sort_output=True, ignore_obsolete=True, **options)
    return out.getvalue()


def update(root: Path) -> None:
    """Write the template and bring every locale's catalog in step with it."""
    template = extracted(root)
    Path(str(i18n.CATALOGS / "messages.pot")).write_bytes(render(template, omit_header=True))
    for tag in i18n.LOCALES:
        if tag == i18n.DEFAULT:
            continue
        catalog = read(tag)
        catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
        po_path(tag).write_bytes(render(catalog))


if __name__ == "__main__":
    update(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
