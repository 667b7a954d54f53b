"""The widget in its reader's language (docs/widget.md, "Languages"): the page's ``data-lang``,
else the identified person's own choice, else the browser's languages among the workspace's,
else its default. The panel's words come from the platform's catalogs with its first call;
Arabic mirrors it; the pseudo-locale leaves no word unmarked and nothing cut off at 390 px.

One workspace for the module (English, German, Japanese, Arabic and French enabled, French by
default), a host page per language, and few page loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import urllib3

from common import i18n
from testkit import create_workspace
from testkit.http import Server
from widget import words

from services.people.tests.helpers import sign_in_by_mail
from services.web.tests.browsing import PHONE, docs_screenshots, page_problems, screenshots

ENABLED = ["en", "de", "ja", "ar", "fr"]
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme app</title></head>
<body><main><h1>Acme app</h1></main>{snippet}</body></html>"""
SNIPPET = '<script src="{platform}/widget/v1.js" data-workspace="{slug}" {extra} async></script>'
# What the test made (user content: shown as written in every language).
USER_CONTENT = ("Acme", "Feature requests", "Bugs", "Offline mode", "Dark mode", "Spring release", "Everything is faster.")
http = urllib3.PoolManager(retries=False, timeout=10)


def translated(locale: str, message: str) -> str:
    with i18n.using(locale):
        return i18n.gettext(message)


def catalog_has(locale: str, message: str) -> bool:
    return i18n.language(locale).translations.gettext(message) != message


@pytest.fixture(scope="module")
def setup(stack, api, admin_token, maildir):
    ws = create_workspace(api, admin_token, name="Acme")
    ws.board("features", "Feature requests")
    ws.board("bugs", "Bugs")
    host = Server()
    headers = {"Content-Type": "text/html; charset=utf-8"}
    for path, extra in {"/": "", **{f"/{tag}": f'data-lang="{tag}"' for tag in (*ENABLED, i18n.PSEUDO)}}.items():
        body = PAGE.format(snippet=SNIPPET.format(platform=stack.url, slug=ws.slug, extra=extra)).encode()
        host.routes[path] = lambda req, body=body: req.answer(200, body, headers)
    ws.settings(widgetOrigins=[host.url], locales=ENABLED, defaultLocale="fr")
    for title in ("Offline mode", "Dark mode"):
        r = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": title, "content": "Please."})
        assert r.status_code == 201, r.text
    r = api.post(f"{ws.path}/changelogs", key=ws.key, json={"title": "Spring release", "slug": "spring",
                                                            "content": "Everything is faster.", "publish": True})
    assert r.status_code == 201, r.text
    yield ws, host
    host.close()


def test_the_script_asks_for_the_words_make_messages_puts_in_the_catalogs():
    from common.catalogs import extracted

    root = Path(__file__).resolve().parents[3]
    in_catalogs = {m.id if isinstance(m.id, str) else tuple(m.id) for m in extracted(root)
                   if any(path.endswith("widget/static/v1.js") for path, _line in m.locations)}
    assert in_catalogs == set(words.messages()) and len(in_catalogs) > 30


def config(stack, ws, host, token: str | None = None, **query) -> dict:
    headers = {"Origin": host.url, **({"X-Feedback-User": token} if token else {})}
    r = http.request("GET", f"{stack.url}/widget/v1/{ws.slug}/config", fields=query, headers=headers)
    assert r.status == 200, r.data
    return r.json()


def test_the_panel_speaks_the_pages_language_else_the_persons_else_the_browsers_else_the_workspaces(setup, stack, maildir):
    ws, host = setup
    assert config(stack, ws, host, lang="de", languages="ja")["locale"] == "de"
    assert config(stack, ws, host, languages="ja-JP,en;q=0.5")["locale"] == "ja"
    assert config(stack, ws, host, languages="ko,zh-CN")["locale"] == "fr", "none enabled: the workspace's default"
    assert config(stack, ws, host, lang="ko", languages="de")["locale"] == "de", "a page's language the workspace did not enable"
    # A person who chose Japanese (on the board, signed in as themselves), identified by the page's token.
    email = f"reader-{ws.slug}@example.com"
    session = sign_in_by_mail(ws, maildir, email)["token"]
    assert ws.api.patch("/me", key=session, json={"locale": "ja"}).status_code == 200
    token = ws.user_token("reader", email=email)
    assert config(stack, ws, host, token, languages="de")["locale"] == "ja"
    assert config(stack, ws, host, token, lang="ar", languages="de")["locale"] == "ar"

    arabic = config(stack, ws, host, lang="ar")
    assert arabic["dir"] == "rtl" and config(stack, ws, host, lang="de")["dir"] == "ltr"
    # Every message the script says, in the panel's language; a plural's forms by CLDR category.
    assert set(arabic["messages"]) == {m if isinstance(m, str) else m[0] for m in words.messages()}
    assert arabic["messages"]["Submit"] == translated("ar", "Submit")
    votes = arabic["messages"]["Vote for %(title)s, %(num)s vote"]
    assert set(votes) == {"zero", "one", "two", "few", "many", "other"}
    assert set(config(stack, ws, host, lang="ja")["messages"]["Vote for %(title)s, %(num)s vote"]) == {"other"}

    # The statuses' names in the panel's language (a default status's name is the catalog's).
    r = http.request("GET", f"{stack.url}/widget/v1/{ws.slug}/posts", fields={"sort": "top", "lang": "de"},
                     headers={"Origin": host.url})
    assert {p["status"]["name"] for p in r.json()["items"]} == {translated("de", "Open")}


def shadow(pg, script: str):
    return pg.evaluate(f"(() => {{ const root = document.querySelector('[data-feedback-widget]').shadowRoot; return {script}; }})()")


def test_a_page_in_german_shows_the_panel_in_german_and_a_german_browser_too(setup, browser):
    ws, host = setup
    submit = translated("de", "Submit")
    for path, options in (("/de", {}), ("/", {"locale": "de-DE"})):
        context = browser.new_context(**options)
        try:
            pg = context.new_page()
            pg.set_default_timeout(15_000)
            pg.goto(host.url + path)
            pg.evaluate("FeedbackWidget.open()")
            dialog = pg.get_by_role("dialog", name="Acme")
            dialog.get_by_role("tab", name=submit, exact=True).wait_for()
            assert shadow(pg, "[root.querySelector('.panel').lang, root.querySelector('.panel').dir]") == ["de", "ltr"]
            if catalog_has("de", "Submit"):
                assert submit != "Submit"
        finally:
            context.close()


def test_arabic_mirrors_the_panel_and_arabic_and_japanese_are_axe_clean(setup, page):
    ws, host = setup
    page.set_viewport_size(PHONE)
    problems = []
    for tag in ("ar", "ja"):
        page.goto(f"{host.url}/{tag}")
        page.evaluate("FeedbackWidget.open('posts')")
        dialog = page.get_by_role("dialog", name="Acme")
        dialog.locator("li").first.wait_for()
        problems += page_problems(page, f"posts, {tag}")
        if tag == "ar":
            assert shadow(page, "[root.querySelector('.panel').lang, root.querySelector('.panel').dir]") == ["ar", "rtl"]
            # Right to left: the first tab is at the right, the vote button right of its title.
            first, last = (shadow(page, f"root.querySelectorAll('[role=tab]')[{i}].getBoundingClientRect().x") for i in (0, 3))
            assert first > last
            vote, link = (shadow(page, f"root.querySelector('li {css}').getBoundingClientRect().x") for css in (".vote", "a"))
            assert vote > link
            page.screenshot(path=docs_screenshots() / "widget-ar.png")
    assert problems == []


# Every word the panel shows (its text, and its accessible names), for the pseudo-locale's check;
# a <time> is the language's own format of a date, not a catalog's word.
PANEL_TEXT = """(() => {
  const root = document.querySelector('[data-feedback-widget]').shadowRoot;
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (el.closest('[hidden], time') || !n.textContent.trim()) continue;
    out.push(n.textContent.trim());
  }
  for (const el of root.querySelectorAll('[aria-label]')) out.push(el.getAttribute('aria-label'));
  return out;
})()"""
# What overflows in the panel: an element wider than its box (text cut off, a row that scrolls).
OVERFLOWING = """(() => {
  const root = document.querySelector('[data-feedback-widget]').shadowRoot;
  const panel = root.querySelector('.panel').getBoundingClientRect();
  const out = [];
  if (panel.left < 0 || panel.right > window.innerWidth) out.push(`the panel: ${panel.left}..${panel.right}`);
  for (const el of root.querySelectorAll('.panel *:not(.sr)')) {
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') out.push(el.tagName + ' ' + el.className);
  }
  return out;
})()"""


def test_the_pseudo_locale_leaves_no_word_unmarked_and_nothing_cut_off_at_390_px(setup, page):
    ws, host = setup
    page.set_viewport_size(PHONE)
    page.goto(f"{host.url}/{i18n.PSEUDO}")
    page.evaluate("FeedbackWidget.open()")
    dialog = page.get_by_role("dialog", name="Acme")
    left, wide = [], []
    for tab, ready in (("submit", "label"), ("mine", "p.empty:not(:empty)"), ("posts", "li"), ("changelog", "article")):
        page.evaluate(f"FeedbackWidget.open('{tab}')")
        dialog.locator(f"[role=tabpanel] {ready}").first.wait_for()
        if tab == "submit":  # the similar requests, while typing
            dialog.get_by_role("textbox").first.fill("Dark mode")
            dialog.locator("[role=tabpanel] li").first.wait_for()
        for text in page.evaluate(PANEL_TEXT):
            rest = re.sub(r"⟦[^⟧]*⟧", " ", text)
            for kept in USER_CONTENT:
                rest = rest.replace(kept, " ")
            if re.search(r"[A-Za-z]{2,}", rest):
                left.append((tab, text))
        wide += [(tab, what) for what in page.evaluate(OVERFLOWING)]
        if tab == "submit":
            page.screenshot(path=screenshots() / "widget-pseudo-390.png")
    page.evaluate("FeedbackWidget.close()")
    launcher = shadow(page, "root.querySelector('.launcher').textContent")
    assert "⟦" in launcher, launcher
    assert left == [], left
    assert wide == [], wide
    assert page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]") == [PHONE["width"]] * 2
