"""The catalogs (docs/languages.md): every message the code says is in the template and in every
locale's catalog, translated, with no entry left that the code no longer says; each catalog
compiles, keeps every placeholder of its messages and has as many plural forms as its language.

A new English string without its translations fails here: run ``make messages``, translate the
new entries in each ``libs/common/common/locales/<locale>/LC_MESSAGES/messages.po``."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from common import catalogs, i18n

ROOT = Path(__file__).resolve().parents[1]
LOCALES = [tag for tag in i18n.LOCALES if tag != i18n.DEFAULT]
PLACEHOLDER = re.compile(r"%\(([a-z_]+)\)[sd]")
# Markup a translation must keep (a link, emphasis): the tags' names, not their order.
TAG = re.compile(r"</?([a-z]+)[ >]")


@pytest.fixture(scope="module")
def template():
    return catalogs.extracted(ROOT)


def keys(catalog) -> set:
    return {(m.context, m.id if isinstance(m.id, str) else tuple(m.id)) for m in catalog if m.id}


def test_the_template_is_what_the_code_says(template):
    with open(ROOT / "libs/common/common/locales/messages.pot", "rb") as f:
        committed = read_po(f)
    assert keys(committed) == keys(template), "run `make messages` and translate what it adds"
    assert len(keys(template)) > 300  # the pages, mails and widget are all in it


@pytest.mark.parametrize("tag", LOCALES)
def test_every_message_is_translated_in_every_catalog_and_none_is_stale(template, tag):
    catalog = catalogs.read(tag)
    wanted, present = keys(template), keys(catalog)
    assert not wanted - present, f"{tag}: missing {sorted(map(str, wanted - present))[:10]} (run `make messages`)"
    assert not present - wanted, f"{tag}: stale {sorted(map(str, present - wanted))[:10]} (run `make messages`)"
    untranslated = [m.id for m in catalog if m.id and (m.fuzzy or not all(m.string if isinstance(m.string, tuple) else [m.string]))]
    assert not untranslated, f"{tag}: {len(untranslated)} untranslated, e.g. {untranslated[:5]}"


@pytest.mark.parametrize("tag", LOCALES)
def test_every_catalog_compiles_and_keeps_placeholders_markup_and_plural_forms(tag):
    catalog = catalogs.read(tag)
    expected_forms = {"ja": 1, "zh-CN": 1, "ko": 1, "pl": 3, "ar": 6}.get(tag, 2)
    assert catalog.num_plurals == expected_forms, f"{tag}: {catalog.num_plurals} plural forms"
    wrong = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if isinstance(message.id, tuple):
            assert len(strings) == expected_forms, f"{tag}: {message.id[0]!r} has {len(strings)} forms"
        wanted = set(PLACEHOLDER.findall(ids[-1])) | set(PLACEHOLDER.findall(ids[0]))
        tags = sorted(set(TAG.findall(ids[0])))
        for string in strings:
            # A plural form may leave the number out ("one" in some languages says it in words).
            if set(PLACEHOLDER.findall(string)) - wanted or (not isinstance(message.id, tuple)
                                                             and set(PLACEHOLDER.findall(string)) != wanted):
                wrong.append((message.id, string, "placeholders"))
            if sorted(set(TAG.findall(string))) != tags:
                wrong.append((message.id, string, "markup"))
            if string.count("%") - 2 * string.count("%%") != len(PLACEHOLDER.findall(string)):
                wrong.append((message.id, string, "a stray %"))
    assert not wrong, f"{tag}: {wrong[:5]}"
    write_mo(io.BytesIO(), catalog)  # compiles


def test_the_language_is_chosen_link_first_then_person_browser_workspace():
    enabled = ["en", "de", "ja", "ar"]
    assert i18n.choose(asked="ja", chosen="de", accept_language="de", enabled=enabled) == "ja"
    assert i18n.choose(asked="fr", chosen="de", accept_language="ja", enabled=enabled) == "de"  # fr not enabled
    assert i18n.choose(accept_language="fr-CA, de-AT;q=0.8, en;q=0.5", enabled=enabled) == "de"
    assert i18n.choose(accept_language="fr, es;q=0.9", enabled=enabled, default="ja") == "ja"
    assert i18n.choose(accept_language="en;q=0, de;q=0.1", enabled=enabled) == "de"  # q=0: not wanted
    assert i18n.choose(accept_language="zh-Hans-CN, pt", enabled=list(i18n.LOCALES)) == "zh-CN"
    assert i18n.choose(accept_language="pt", enabled=list(i18n.LOCALES)) == "pt-BR"
    assert i18n.choose(asked=i18n.PSEUDO, enabled=["en"]) == i18n.PSEUDO  # the translators' view, always
    assert i18n.choose(accept_language="garbage;;;q=x," * 50, enabled=enabled) == "en"


def test_plurals_follow_each_languages_rules():
    with i18n.using("pl"):
        forms = [i18n.current().translations.plural(n) for n in (1, 2, 5, 22, 25)]
    assert forms == [0, 1, 2, 1, 2]
    with i18n.using("ar"):
        assert [i18n.current().translations.plural(n) for n in (0, 1, 2, 3, 11, 100)] == [0, 1, 2, 3, 4, 5]
        assert i18n.current().direction == "rtl"


def test_the_pseudo_locale_marks_every_word_and_keeps_placeholders_and_markup():
    shown = i18n.pseudo('Signed in as %(name)s, <a href="/x">see</a> 100%%')
    assert shown.startswith("⟦") and shown.endswith("⟧") and "%(name)s" in shown and '<a href="/x">' in shown
    assert "Signed" not in shown and len(shown) > len('Signed in as %(name)s, <a href="/x">see</a> 100%%')
