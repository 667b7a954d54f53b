"""The admin area in every language (issue 40): every admin page says every word through the
catalogs (the pseudo-locale) without being wider than a phone, the Settings page's languages
(the workspace's enabled locales and its default) are saved and a default that is not enabled is
refused with the API's message, and the overview and settings are axe-clean in Arabic (right to
left) and Japanese. One workspace and one signed-in owner for the module."""

from __future__ import annotations

import re

import pytest
from testkit.api import create_workspace

from common.i18n import LOCALES

from .browsing import DESKTOP, PHONE, docs_screenshots, page_problems, sign_in_as_team, too_wide, untranslated
from .helpers import create_post

EMAIL = "languages-owner@example.com"
# The test's own content (user content stays as written), the languages' own names, and what is
# code or an example address rather than words (placeholders, the widget's snippet).
BOARD = ("features", "Feature requests")
POST = "Offline mode for the mobile app"
ENTRY = ("Offline mode", "offline-mode", "Works on a plane now.")
TAG, FIELD, EFFORT = ("UX", "ux"), ("Impact", "impact", "High", "Low"), ("Effort", "effort")
HOOK = "http://127.0.0.1:9/languages-hook"
EXAMPLES = ("https://login.example.com", "feedback.example.com", "https://example.com/feedback-hook", "example.com")
ALLOWED = (*BOARD, POST, *ENTRY, *TAG, *FIELD, *EFFORT, HOOK, *EXAMPLES, EMAIL, EMAIL.split("@")[0], "Acme",
           *LOCALES.values())
# Dates and times are Babel's (and the browser's) locale data, not messages: the pseudo-locale
# writes them as its base, English, does ("Nov 24, 2026, 12:00 PM UTC").
DATE_WORDS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "AM", "PM", "UTC")


@pytest.fixture(scope="module")
def admin(stack, api, admin_token, browser):
    """A workspace without a board yet (its first-run setup is one of the pages), and a phone's
    browser signed in as its owner (in English: the invitation's page is not this module's)."""
    workspace = create_workspace(api, admin_token)
    context = browser.new_context(viewport=PHONE, timezone_id="UTC")
    context.set_default_timeout(15_000)
    pg = context.new_page()
    sign_in_as_team(pg, workspace, EMAIL)
    yield {"workspace": workspace, "page": pg, "base": f"{stack.url}/b/{workspace.slug}"}
    context.close()


def content(workspace) -> dict:
    """What the admin pages list: a board, a post, tags and fields, a draft changelog entry, a
    webhook and an export; returns what the pages name of it that the test did not write."""
    workspace.board(*BOARD)
    post = create_post(workspace, POST)
    calls = (
        ("put", "/triage", {"tags": [{"slug": TAG[1], "name": TAG[0], "color": "#7c3aed"}],
                            "fields": [{"key": FIELD[1], "name": FIELD[0], "type": "select", "options": list(FIELD[2:])},
                                       {"key": EFFORT[1], "name": EFFORT[0], "type": "number", "min": 1, "max": 5}]}),
        ("post", "/changelogs", {"title": ENTRY[0], "slug": ENTRY[1], "content": ENTRY[2], "postIds": [post["id"]]}),
        ("post", "/webhooks", {"url": HOOK, "events": ["post.created", "vote.created"]}),
        ("post", "/exports", None),
    )
    made = {}
    for method, path, body in calls:
        r = getattr(workspace.api, method)(workspace.path + path, key=workspace.key, **({"json": body} if body else {}))
        assert r.status_code in (200, 201, 202), (path, r.text)
        made[path] = r.json()
    keys = workspace.api.get(f"{workspace.path}/api-keys", key=workspace.key).json()["items"]
    types = workspace.api.get(f"{workspace.path}/webhooks/event-types", key=workspace.key).json()["items"]
    statuses = workspace.api.get(f"{workspace.path}/statuses", key=workspace.key).json()["items"]
    return {"post": post["id"], "entry": made["/changelogs"]["id"], "hook": made["/webhooks"]["id"],
            "statuses": [s["name"] for s in statuses],
            # The keys' names and prefixes, the catalog's event types, the formula's names, the
            # statuses' slugs, the workspace's (in the SSO hint and the OpenID Connect callback),
            # the settings the audit log names as changed, and who the platform's operator is.
            "code": (*(k["name"] for k in keys), *(k["prefix"] for k in keys), *(t["type"] for t in types),
                     *(s["slug"] for s in statuses), "votes", "revenue", workspace.slug, "sign-in/oidc/callback",
                     "boards", "Operator")}


def problems_of(pg, name: str, found: dict, allowed=()) -> None:
    """What the page leaves unmarked in the pseudo-locale, and how much wider than the phone it is."""
    left = untranslated(pg, (*ALLOWED, *allowed, *DATE_WORDS))
    wide = too_wide(pg)
    if left or wide:
        found[name] = {"untranslated": left, "too wide": wide}


def test_every_admin_page_says_every_word_through_the_catalogs_at_390_px(admin):
    """The pseudo-locale marks each word the code shows (⟦…⟧, 40% longer): a page leaving one
    out, or too narrow for longer words, is named with what is wrong."""
    pg, base, workspace = admin["page"], admin["base"], admin["workspace"]
    found: dict = {}
    pg.goto(base + "/admin/setup?lang=en-XA")  # and the cookie keeps it for the pages after
    assert pg.locator("html").get_attribute("lang") == "en-XA"
    problems_of(pg, "setup", found)
    made = content(workspace)
    pages = {
        "overview": "", "queue": "/queue", "duplicates": "/duplicates", "changelog": "/changelog",
        "changelog, new": "/changelog/new", "changelog, entry": f"/changelog/{made['entry']}", "triage": "/triage",
        "api keys": "/api-keys", "webhooks": "/webhooks", "webhook": f"/webhooks/{made['hook']}", "boards": "/boards",
        # the statuses page edits the names as the team wrote them (the defaults too)
        "statuses": "/statuses", "domain": "/domain", "widget": "/widget", "exports": "/exports", "imports": "/imports",
        "audit": "/audit", "team": "/team", "settings": "/settings", "authentication": "/authentication",
    }
    for name, path in pages.items():
        pg.goto(f"{base}/admin{path}")
        assert pg.locator("html").get_attribute("lang") == "en-XA", name
        problems_of(pg, name, found, (*made["code"], *(made["statuses"] if name == "statuses" else ()), *snippet(pg), base))
    assert found == {}, found


def snippet(pg) -> tuple[str, ...]:
    """The widget page's snippet to copy: code, not words."""
    code = pg.locator("#widget-snippet")
    return (code.inner_text(),) if code.count() else ()


def settings_of(workspace) -> dict:
    r = workspace.api.get(f"{workspace.path}/settings", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_settings_page_saves_the_workspaces_languages_and_refuses_a_default_not_enabled(admin):
    pg, base, workspace = admin["page"], admin["base"], admin["workspace"]
    try:
        pg.goto(base + "/admin/settings?lang=en")
        boxes = pg.locator('input[name="locales"]')
        assert [boxes.nth(i).get_attribute("value") for i in range(boxes.count())] == list(LOCALES)
        # each language by its own name, in its own language
        assert pg.locator('.language-choices [lang="ja"]').inner_text() == "日本語"
        assert pg.locator('#default-locale option[value="ar"]').get_attribute("lang") == "ar"
        for tag in LOCALES:
            if tag not in ("en", "de", "ja", "ar"):
                pg.locator(f'input[name="locales"][value="{tag}"]').uncheck()
        pg.locator("#default-locale").select_option("de")
        pg.get_by_role("button", name="Save settings").click()
        pg.wait_for_url(re.compile(r"done=saved$"))
        assert pg.locator("[role=status]").inner_text() == "Settings saved."
        saved = settings_of(workspace)
        assert (saved["locales"], saved["defaultLocale"]) == (["en", "de", "ja", "ar"], "de")
        assert pg.locator('input[name="locales"]:checked').count() == 4 and pg.locator("#default-locale").input_value() == "de"

        # The default unchecked: the API refuses, its message beside the languages, nothing saved.
        refusal = workspace.api.patch(f"{workspace.path}/settings", key=workspace.key,
                                      json={"locales": ["en", "ja", "ar"], "defaultLocale": "de"})
        assert refusal.status_code == 400 and refusal.json()["code"] == "locale_not_enabled", refusal.text
        pg.locator('input[name="locales"][value="de"]').uncheck()
        pg.get_by_role("button", name="Save settings").click()
        alert = pg.locator("#languages-error")
        assert alert.inner_text() == refusal.json()["error"]
        assert pg.locator("#default-locale").get_attribute("aria-invalid") == "true"
        assert pg.locator('input[name="locales"]:checked').count() == 3  # what was typed, kept
        assert settings_of(workspace)["locales"] == ["en", "de", "ja", "ar"]
    finally:
        workspace.settings(locales=list(LOCALES), defaultLocale="en")


def test_the_overview_and_settings_are_axe_clean_in_arabic_right_to_left_and_in_japanese(admin):
    pg, base = admin["page"], admin["base"]
    pg.set_viewport_size(DESKTOP)
    problems = []
    try:
        for tag, direction in (("ar", "rtl"), ("ja", "ltr")):
            for name, path in (("overview", ""), ("settings", "/settings")):
                pg.goto(f"{base}/admin{path}?lang={tag}")
                html = pg.locator("html")
                assert (html.get_attribute("lang"), html.get_attribute("dir")) == (tag, direction)
                problems += page_problems(pg, f"{name} in {tag}")
                if (tag, name) == ("ar", "settings"):
                    # Mirrored: the admin navigation is on the right of the page.
                    nav, content = pg.locator(".admin-nav").bounding_box(), pg.locator(".admin-content").bounding_box()
                    assert nav["x"] > content["x"], (nav, content)
                    # The screenshot: the languages, beside the navigation (sticky).
                    pg.evaluate("document.getElementById('languages-h').scrollIntoView({block: 'start'})")
                    shoot(pg, "admin-settings-ar.png")
    finally:
        pg.set_viewport_size(PHONE)
    assert problems == []


def shoot(pg, name: str) -> None:
    """The page's first screen in docs/screenshots, its colours reduced to a palette (as the
    board's language screenshots are saved)."""
    from PIL import Image

    target = docs_screenshots() / name
    pg.screenshot(path=str(target))
    Image.open(target).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
