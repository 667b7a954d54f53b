"""The board's pages in every language (issue 40): a browser preferring German gets German, a
workspace's default applies when the browser's languages are not enabled, Arabic is laid out
right to left, every page of the board says every word through the catalogs (the pseudo-locale)
without being wider than a phone, and the footer's language choice works without JavaScript
and is kept with a signed-in person. One workspace for the module (a second, boardless one for
the pages of a workspace without a board) and one browser.

The assertions on words hold before and after the catalogs are translated: a word is expected
as the catalog of that language says it (``expected``), which is English until it is translated.
"""

from __future__ import annotations

import re

import pytest
import requests
from testkit.api import create_workspace

from common import i18n
from common.i18n import LOCALES

from .browsing import DESKTOP, PHONE, docs_screenshots, page_problems, too_wide, untranslated
from .helpers import Visitor, create_post, form_csrf, invite, team_member

# The test's own content (user content stays as written, in any language) and the languages'
# own names in the footer's choice (each in its own words, whatever the page's language).
TITLES = ("الوضع الداكن للتطبيق", "تصدير التقارير إلى جدول بيانات", "Offline mode for the mobile app")
CONTENTS = ("نرسل هذه التقارير إلى قسم المالية كل شهر.", "Sync when the network comes back.")
COMMENT = "نعم من فضلك، وملف CSV أيضا."
NAMES = ("Amira Haddad", "Kenji Sato", "Lena Fischer")
ENTRY = ("Spreadsheet export", "Reports export to XLSX.")
# Who acted on a post when an API key did: the key's name.
KEY_NAME = "Default manager key"
ALLOWED = (*TITLES, *CONTENTS, COMMENT, *NAMES, *(n.split()[0][0] + n.split()[1][0] for n in NAMES), *ENTRY, KEY_NAME,
           "Feature requests", "Acme", "UX", "Impact", "High", "Low", *LOCALES.values())


def expected(tag: str, message: str, context: str | None = None) -> str:
    """``message`` as the catalog of ``tag`` says it (English while it is not translated)."""
    with i18n.using(tag):
        return i18n.pgettext(context, message) if context else i18n.gettext(message)


@pytest.fixture(scope="module")
def board(stack, api, admin_token):
    """A workspace with a board, three posts (two in Arabic, with votes, a comment, a tag, an
    internal field, a status and an ETA) and a published changelog entry."""
    workspace = create_workspace(api, admin_token)
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True, theme="light")
    r = workspace.api.put(f"{workspace.path}/triage", key=workspace.key, json={
        "tags": [{"slug": "ux", "name": "UX", "color": "#7c3aed"}],
        "fields": [{"key": "impact", "name": "Impact", "type": "select", "options": ["High", "Low"]}]})
    assert r.status_code == 200, r.text
    posts = [create_post(workspace, title, content) for title, content in zip(TITLES, (*CONTENTS[:1], "", CONTENTS[1]))]
    first = posts[0]
    r = workspace.api.patch(f"{workspace.path}/posts/{first['id']}", key=workspace.key,
                            json={"statusSlug": "planned", "tags": ["ux"], "eta": "2027-03", "fields": {"impact": "High"}})
    assert r.status_code == 200, r.text
    for i, name in enumerate(NAMES):
        for post in posts[: 3 - i]:
            r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/vote", user=workspace.user_token(f"v{i}", name=name))
            assert r.status_code in (200, 201), r.text
    r = workspace.api.post(f"{workspace.path}/posts/{first['id']}/comments", user=workspace.user_token("v0", name=NAMES[0]),
                           json={"content": COMMENT})
    assert r.status_code == 201, r.text
    r = workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key, json={
        "title": ENTRY[0], "slug": "export", "content": ENTRY[1], "postIds": [first["id"]], "publish": True})
    assert r.status_code == 201, r.text
    base = f"{stack.url}/b/{workspace.slug}"
    return {"workspace": workspace, "base": base, "post": f"{base}/p/{first['id']}", "post_id": first["id"], "stack": stack}


def context_of(browser, **options):
    context = browser.new_context(timezone_id="UTC", **options)
    context.set_default_timeout(15_000)
    return context


def lang_and_dir(pg) -> tuple[str, str]:
    return pg.locator("html").get_attribute("lang"), pg.locator("html").get_attribute("dir")


def test_a_browser_preferring_german_gets_the_board_and_a_post_in_german(browser, board):
    context = context_of(browser, locale="de-DE")  # Accept-Language: de-DE
    pg = context.new_page()
    try:
        pg.goto(board["base"])
        assert lang_and_dir(pg) == ("de", "ltr")
        assert pg.locator("#footer-language").input_value() == "de"
        assert pg.locator("h1").inner_text() == expected("de", "Feedback")
        assert pg.get_by_role("link", name=expected("de", "Submit an idea")).count() >= 1
        assert pg.locator('[data-sort="top"]').inner_text() == expected("de", "Top", "sort")
        pg.goto(board["post"])
        assert lang_and_dir(pg) == ("de", "ltr")
        # Babel's German date (day.month.year) on the post's time, site.js keeping the page's language.
        title = pg.locator("article.post time").first.get_attribute("title")
        assert re.search(r"\b\d{2}\.\d{2}\.\d{4}\b", title), title
        assert pg.locator("#comments-h").inner_text() == expected("de", "Comments (%(count)s)") % {"count": 1}
    finally:
        context.close()


def test_the_workspaces_default_applies_when_the_browsers_languages_are_not_enabled(browser, board):
    workspace = board["workspace"]
    workspace.settings(locales=["en", "ja"], defaultLocale="ja")
    context = context_of(browser, locale="fr-FR", viewport=DESKTOP)  # French only: not enabled here
    pg = context.new_page()
    try:
        pg.goto(board["base"])
        assert lang_and_dir(pg) == ("ja", "ltr")
        options = pg.locator("#footer-language option")
        assert [options.nth(i).get_attribute("value") for i in range(options.count())] == ["en", "ja"]
        assert [options.nth(i).get_attribute("lang") for i in range(options.count())] == ["en", "ja"]
        assert pg.locator("#footer-language").input_value() == "ja"
        problems = page_problems(pg, "board in Japanese")
        pg.goto(board["post"])
        assert lang_and_dir(pg) == ("ja", "ltr")
        problems += page_problems(pg, "post in Japanese")
        assert problems == []
    finally:
        context.close()
        workspace.settings(locales=list(LOCALES), defaultLocale="en")


def test_arabic_is_right_to_left_and_mirrored_and_axe_clean(browser, board):
    context = context_of(browser, viewport=DESKTOP)
    pg = context.new_page()
    try:
        pg.goto(board["base"] + "?lang=ar")
        assert lang_and_dir(pg) == ("ar", "rtl")
        # Mirrored: the vote button is at the row's right, the brand at the header's right.
        row = pg.locator(".post-row").first.bounding_box()
        vote = pg.locator(".post-row .vote-button").first.bounding_box()
        assert vote["x"] + vote["width"] / 2 > row["x"] + row["width"] / 2, (row, vote)
        header, brand = pg.locator(".site-header").bounding_box(), pg.locator(".brand").bounding_box()
        assert brand["x"] > header["x"] + header["width"] / 2, (header, brand)
        problems = page_problems(pg, "board in Arabic")
        shoot(pg, "board-ar.png")
        # ?lang= is kept as this browser's choice: the next page is Arabic without it.
        pg.set_viewport_size(PHONE)
        pg.goto(board["post"])
        assert lang_and_dir(pg) == ("ar", "rtl")
        head, vote = pg.locator(".post-head").bounding_box(), pg.locator(".post-head .vote-button").bounding_box()
        assert vote["x"] + vote["width"] / 2 > head["x"] + head["width"] / 2, (head, vote)
        # a reply is indented from the right
        problems += page_problems(pg, "post in Arabic, phone")
        shoot(pg, "post-ar-phone.png")
        assert problems == []
    finally:
        context.close()


def shoot(pg, name: str) -> None:
    """The page's first screen in docs/screenshots, its colours reduced to a palette (as
    bench/screenshots.py saves the others)."""
    from PIL import Image

    target = docs_screenshots() / name
    pg.screenshot(path=str(target))
    Image.open(target).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


def dates(pg) -> list[str]:
    """The page's dates and times (Babel's and the browser's formats, in the pseudo-locale's
    base, English: locale data, not messages of the catalogs)."""
    return pg.evaluate("[...document.querySelectorAll('time')].flatMap(t => [t.textContent.trim(), t.title])")


def check(pg, name: str, found: dict, allowed=()) -> None:
    left = untranslated(pg, (*ALLOWED, *allowed, *dates(pg)))
    wide = too_wide(pg)
    if left or wide:
        found[name] = {"untranslated": left, "too wide": wide}


def test_every_board_page_says_every_word_through_the_catalogs_at_390_px(browser, board, api, admin_token):
    """The pseudo-locale marks each word the code shows (⟦…⟧, 40% longer): a page leaving one
    out, or too narrow for longer words, is named with what is wrong."""
    base, post_id, workspace = board["base"], board["post_id"], board["workspace"]
    email = "languages-team@example.com"
    found: dict = {}
    context = context_of(browser, viewport=PHONE)
    pg = context.new_page()
    try:
        # Signed in as the team (in English: the invitation's page is not this module's), with a
        # comment of their own to edit.
        sign_in(pg, workspace, email)
        pg.goto(board["post"])
        pg.locator("#comment-new").fill("A comment of the team's own")
        pg.locator(".comment-form button[type=submit]").click()
        pg.wait_for_url(re.compile(r"#c-"))
        comment_id = pg.url.rsplit("#c-", 1)[1]
        mine = ("A comment of the team's own", email, email.split("@")[0])

        pg.goto(base + "?lang=en-XA")  # and the cookie keeps it for the pages after
        assert lang_and_dir(pg) == ("en-XA", "ltr")
        check(pg, "board", found, mine)
        for name, path in (("board, nothing found", "?q=nothing-like-this"), ("post, team", f"/p/{post_id}"),
                           ("roadmap", "/roadmap"), ("changelog", "/changelog"), ("submit", "/new"),
                           ("post edit", f"/p/{post_id}/edit"), ("comment edit", f"/p/{post_id}/comments/{comment_id}/edit"),
                           ("post delete", f"/p/{post_id}/delete"), ("comment delete", f"/p/{post_id}/comments/{comment_id}/delete"),
                           ("changelog confirm", "/changelog/confirm?token=" + "c" * 40),
                           ("changelog confirm, not valid", "/changelog/confirm?token=!"),
                           ("changelog unsubscribe", "/changelog/unsubscribe?token=" + "u" * 40)):
            pg.goto(base + path)
            check(pg, name, found, mine)
        # an API refusal: what it means in the reader's words, the API's English as the detail
        pg.goto(base + "/p/no-such-post")
        detail = pg.locator('.hint [lang="en"]').inner_text()
        check(pg, "error", found, (*mine, detail))

        # Anonymous: the post page's vote and follow, and a workspace without a board.
        pg.context.clear_cookies()
        pg.goto(board["post"] + "?lang=en-XA")
        check(pg, "post, anonymous", found, mine)
        empty = create_workspace(api, admin_token)
        pg.goto(f"{board['stack'].url}/b/{empty.slug}/new")
        check(pg, "no board, anonymous", found)
        pg.context.clear_cookies()
        sign_in(pg, empty, email)
        pg.goto(f"{board['stack'].url}/b/{empty.slug}?lang=en-XA")
        assert pg.locator("#fb-name").count() == 1
        check(pg, "no board, the team", found, mine)
    finally:
        context.close()
    assert found == {}, "\n".join(f"{name}: {what}" for name, what in found.items())


def sign_in(pg, workspace, email: str) -> None:
    """Accept an invitation to ``workspace``'s team by its form (whatever the page's language)."""
    pg.goto(invite(workspace, email))
    pg.locator(f'form[action="/b/{workspace.slug}/join"] button[type=submit]').click()
    pg.wait_for_url(re.compile(r"/b/[a-z0-9-]+(/admin/setup)?$"))


def choose(pg, tag: str) -> None:
    """The footer's language form, as a browser without JavaScript sends it."""
    pg.locator("#footer-language").select_option(tag)
    pg.locator("form.language-choice button[type=submit]").click()
    pg.wait_for_load_state()


def test_the_footer_chooses_the_language_without_javascript_and_keeps_it(browser, board):
    workspace = board["workspace"]
    context = context_of(browser, java_script_enabled=False, locale="en-US")
    pg = context.new_page()
    try:
        pg.goto(board["post"])
        choose(pg, "de")
        assert pg.url == board["post"] and lang_and_dir(pg) == ("de", "ltr")  # back on the same page
        assert {c["name"]: c for c in context.cookies()}["fb_lang"]["httpOnly"] is True
        pg.goto(board["base"] + "/roadmap")
        assert lang_and_dir(pg) == ("de", "ltr")  # kept by the cookie
        # Signed in, the choice is the person's own too: their mails and other browsers follow it.
        sign_in(pg, workspace, "languages-chooser@example.com")
        assert lang_and_dir(pg) == ("de", "ltr")
        choose(pg, "ja")
        assert lang_and_dir(pg) == ("ja", "ltr")
        session = {c["name"]: c["value"] for c in context.cookies()}["fb_session"]
        me = requests.get(f"{board['stack'].url}/v1/me", headers={"Authorization": f"Bearer {session}"}, timeout=30)
        assert me.status_code == 200 and me.json()["locale"] == "ja", me.text
    finally:
        context.close()


def test_the_language_form_takes_only_an_enabled_language_and_a_persons_form_token(board):
    workspace, stack = board["workspace"], board["stack"]
    anonymous = Visitor(stack.url, workspace.slug)
    refused = anonymous.post("/language", {"locale": "xx", "next": f"/b/{workspace.slug}"})
    assert refused.status_code == 400 and 'role="alert"' in refused.text
    back = anonymous.post("/language", {"locale": "fr", "next": f"/b/{workspace.slug}/roadmap?lang=ar"}, allow_redirects=False)
    # another board's address is not followed, and a ?lang= would outrank the choice: it is dropped
    assert back.status_code == 303 and back.headers["Location"] == f"/b/{workspace.slug}/roadmap"
    assert anonymous.http.cookies.get("fb_lang") == "fr"
    assert anonymous.post("/language", {"locale": "fr", "next": "https://elsewhere.example/"},
                          allow_redirects=False).headers["Location"] == f"/b/{workspace.slug}"
    person = team_member(stack.url, workspace, "languages-token@example.com")
    forged = person.post("/language", {"locale": "de", "next": f"/b/{workspace.slug}"})
    assert forged.status_code == 403
    token = form_csrf(person.get().text, f"/b/{workspace.slug}/language")
    assert person.post("/language", {"locale": "de", "next": f"/b/{workspace.slug}", "csrf": token}).status_code == 200
