"""The widget's rules without a browser or a platform: which origins may embed it, what the
workspace's widget settings accept, the text colour on the primary one, and the script's size."""

from __future__ import annotations

import gzip
import re
from importlib.resources import files

import pytest

from common.errors import BadRequest
from common.validation import check
from widget import origins, shapes
from widget.resources import _matches
from workspaces import schemas

LISTED = ["https://app.example.com", "https://shop.example.com:8443", "http://127.0.0.1:5173"]
PLATFORM = "https://feedback.example.net"
# The product's promise (docs/widget.md): the script a page loads is at most this, gzipped.
SCRIPT_BUDGET = 20 * 1024


@pytest.mark.parametrize("origin", [
    "https://app.example.com", "https://APP.example.com", "https://app.example.com:443",
    "https://shop.example.com:8443", "http://127.0.0.1:5173", PLATFORM,
])
def test_a_listed_origin_and_the_platforms_own_are_allowed(origin):
    assert origins.is_allowed(origin, LISTED, PLATFORM + "/")


@pytest.mark.parametrize("origin", [
    None, "", "null", "http://app.example.com", "https://app.example.com:8443", "https://shop.example.com",
    "https://evil.example.com", "https://app.example.com.evil.net", "http://127.0.0.1:5174", "https://app.example.com/",
    "https://user@app.example.com", "file://", "chrome-extension://abc", "https://feedback.example.net:444",
])
def test_any_other_origin_is_refused(origin):
    assert not origins.is_allowed(origin, LISTED, PLATFORM)


def test_an_allowed_origin_is_named_never_a_wildcard_and_caches_vary_by_it():
    answer = origins.answer_headers("https://app.example.com")
    assert answer == {"Access-Control-Allow-Origin": "https://app.example.com", "Vary": "Origin"}
    preflight = origins.preflight_headers("https://app.example.com")
    assert "X-Feedback-User" in preflight["Access-Control-Allow-Headers"]
    assert set(preflight["Access-Control-Allow-Methods"].split(", ")) == {"GET", "POST", "DELETE"}
    assert "Access-Control-Allow-Credentials" not in preflight  # no cookies, ever


@pytest.mark.parametrize("value", [
    [], ["https://app.example.com"], ["https://a.b.example.com:8443", "http://localhost:3000", "http://127.0.0.1"],
    [f"https://site{i}.example.com" for i in range(20)],
])
def test_widget_origins_the_settings_accept(value):
    assert check({"widgetOrigins": value}, schemas.SETTINGS) == {"widgetOrigins": value}


@pytest.mark.parametrize("value", [
    ["http://app.example.com"], ["https://app.example.com/"], ["https://app.example.com/path"], ["HTTPS://APP.EXAMPLE.COM"],
    ["*"], ["https://*.example.com"], ["app.example.com"], ["https://app.example.com", "https://app.example.com"],
    [f"https://site{i}.example.com" for i in range(21)], "https://app.example.com", ["http://192.168.1.2:8080"],
])
def test_widget_origins_the_settings_refuse(value):
    with pytest.raises(BadRequest):
        check({"widgetOrigins": value}, schemas.SETTINGS)


def test_the_launchers_position_and_label():
    assert check({"widgetPosition": "bottom-left", "widgetLabel": "Ideas?"}, schemas.SETTINGS)
    for wrong in ({"widgetPosition": "top-left"}, {"widgetLabel": ""}, {"widgetLabel": " padded "},
                  {"widgetLabel": "x" * 41}, {"widgetLabel": "two\nlines"}):
        with pytest.raises(BadRequest):
            check(wrong, schemas.SETTINGS)


def test_text_on_the_primary_colour_reads_by_wcag_contrast():
    assert shapes.config(_branding("#facc15"), [], "https://p")["onPrimary"] == "#000000"
    assert shapes.config(_branding("#1e3a8a"), [], "https://p")["onPrimary"] == "#ffffff"
    assert shapes.config(_branding("#fff"), [], "https://p")["primaryColor"] == "#ffffff"
    assert shapes.config(_branding("red; x: y"), [], "https://p")["primaryColor"] == shapes.DEFAULT_COLOR


def _branding(color: str) -> dict:
    return {"workspace": {"slug": "acme", "name": "Acme"}, "primaryColor": color}


def test_the_script_is_at_most_20_kb_gzipped_and_evaluates_nothing():
    script = (files("widget") / "static" / "v1.js").read_bytes()
    assert len(gzip.compress(script, 9)) <= SCRIPT_BUDGET
    text = script.decode()
    # No eval, no code from strings, no markup parsed from strings, no style attributes.
    for banned in (r"\beval\(", r"new Function", r"innerHTML", r"outerHTML", r"insertAdjacentHTML", r"document\.write",
                   r"\.style\b", r"setAttribute\('style'", r"cssText"):
        assert not re.search(banned, text), banned


def test_if_none_match_names_the_scripts_etag_weak_or_strong():
    assert _matches('"abc"', '"abc"') and _matches('W/"abc"', '"abc"') and _matches('"x", W/"abc"', '"abc"')
    assert not _matches('"abd"', '"abc"') and not _matches(None, '"abc"')
