"""A person's language on /account, the platform's own pages and the sign-in and account pages
in every language (issue 40).

A person signed in by SSO chooses Japanese on their account page: the next page is Japanese
although their browser asks for English, the API keeps the choice, and "Browser default" clears
it. In the pseudo-locale (``?lang=en-XA``) every word of the sign-in, account, notification,
unsubscribe and invitation pages, the start page and the API reference's chrome is marked and
nothing is wider than a 390 px phone. Indexable pages name the workspace's enabled languages for
search engines, and only those. The account and sign-in pages are axe-clean in Arabic and
Japanese. One workspace and one browser for the module."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
import requests
from testkit.api import create_workspace

from common.errors import BadRequest
from common.i18n import LOCALES
from web.service import account_changes

from .browsing import PHONE, page_problems, screenshots, sign_in_as_team, too_wide, untranslated
from .helpers import Visitor

NAME = "Zephyr Langs"  # the workspace's name: user content, shown as written
ENABLED = ["en", "de", "ja", "ar"]
# The words of the language menus (each language in its own words), shown as written.
AUTONYMS = tuple(LOCALES.values())
# The API reference's own words, said in English in every language: the document's prose
# (lang="en"), and its names, paths, types and statuses (code, translate="no").
DOCUMENT_WORDS = "#main [lang='en'], #main [translate='no'], #main code"


@pytest.fixture(scope="module")
def workspace(api, admin_token):
    workspace = create_workspace(api, admin_token, name=NAME)
    workspace.board("features", "Feature requests")
    workspace.settings(locales=ENABLED, defaultLocale="en")
    return workspace


@pytest.fixture
def english_browser(browser):
    """A browser context asking for English (``Accept-Language: en-US``), the size of a phone."""
    context = browser.new_context(locale="en-US", viewport=PHONE)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def sso_sign_in(pg, site: str, token: str) -> None:
    pg.goto(f"{site}/sso?token={token}")
    pg.locator('form[action$="/sso"] button[type=submit]').click()
    pg.wait_for_url(re.compile(r"/b/[a-z0-9-]+$"))


def session_token(pg) -> str:
    return next(c["value"] for c in pg.context.cookies() if c["name"] == "fb_session")


def test_a_person_chooses_japanese_on_the_account_page_and_then_their_browsers_language(
        english_browser, stack, api, workspace):
    pg, site = english_browser, f"{stack.url}/b/{workspace.slug}"
    # SSO: the person's name is the product's, yet their language is theirs to choose
    sso_sign_in(pg, site, workspace.user_token("kenji", name="Kenji", email="kenji@example.com"))
    pg.goto(f"{site}/account")
    assert pg.locator("html").get_attribute("lang") == "en"
    options = pg.locator("#acc-locale option")
    assert options.evaluate_all("os => os.map(o => [o.value, o.textContent])") == \
        [["", "Browser default"]] + [[tag, LOCALES[tag]] for tag in ENABLED]
    assert pg.locator("#acc-locale").input_value() == ""

    pg.select_option("#acc-locale", "ja")
    pg.locator('form[action$="/account"] button[type=submit]').click()
    pg.wait_for_url(re.compile(r"/account\?saved=1$"))
    assert pg.locator("html").get_attribute("lang") == "ja"  # the browser still asks for English
    assert pg.locator("#acc-locale").input_value() == "ja"
    assert api.get("/me", key=session_token(pg)).json()["locale"] == "ja"
    pg.goto(site)
    assert pg.locator("html").get_attribute("lang") == "ja"
    assert pg.evaluate("navigator.language") == "en-US"

    pg.goto(f"{site}/account")
    pg.select_option("#acc-locale", "")
    pg.locator('form[action$="/account"] button[type=submit]').click()
    pg.wait_for_url(re.compile(r"/account\?saved=1$"))
    assert pg.locator("html").get_attribute("lang") == "en"
    assert pg.locator("#acc-locale").input_value() == ""
    assert api.get("/me", key=session_token(pg)).json()["locale"] is None


def chrome_left(pg, name: str, allowed=(), document_words: bool = False) -> list:
    """``(name, what)`` for each shown text the pseudo-locale did not mark, and for a page wider
    than the phone; ``document_words``: the API reference's own words are left out first."""
    problems = [(name, f"{too_wide(pg)} px too wide")] if too_wide(pg) else []
    pg.screenshot(path=str(screenshots() / f"languages-pseudo-{name}-390.png"), full_page=not document_words)
    if document_words:
        pg.evaluate(f"document.querySelectorAll({DOCUMENT_WORDS!r}).forEach(e => e.remove())")
    return problems + [(name, text) for text in untranslated(pg, allowed)]


def test_every_word_of_the_sign_in_account_and_platform_pages_is_marked_and_fits_a_phone(
        english_browser, stack, workspace):
    pg, site = english_browser, f"{stack.url}/b/{workspace.slug}"
    email = "pseudo-owner@example.com"
    sign_in_as_team(pg, workspace, email)  # in English: the invitation's button is found by its name
    person = (email, email.split("@")[0], NAME, *AUTONYMS)
    problems = []

    pg.goto(f"{site}/account?lang=en-XA")  # the fb_lang cookie keeps the pages that follow pseudo
    assert pg.locator("html").get_attribute("lang") == "en-XA"
    problems += chrome_left(pg, "account", person)
    pg.goto(f"{site}/account/notifications")
    problems += chrome_left(pg, "notifications", person)
    pg.goto(f"{site}/sign-in")
    problems += chrome_left(pg, "sign-in", person)
    pg.fill("#si-email", "pseudo-reader@example.com")
    pg.locator('form[action$="/sign-in"] button[type=submit]').click()
    pg.wait_for_load_state()
    assert pg.locator("[role=status]").count() == 1  # "Check your mail"
    problems += chrome_left(pg, "sign-in-sent", (*person, "pseudo-reader@example.com"))
    pg.goto(f"{site}/unsubscribe?token={'a' * 40}")
    assert pg.locator('form[action*="/unsubscribe?token="]').count() == 1
    problems += chrome_left(pg, "unsubscribe", person)
    pg.goto(f"{site}/unsubscribe?token=not-valid!")
    assert pg.locator("[role=alert]").count() == 1
    problems += chrome_left(pg, "unsubscribe-not-valid", person)
    pg.goto(f"{site}/join?token={'b' * 40}")
    problems += chrome_left(pg, "join", person)

    # The platform's pages read no cookie: the language is the link's.
    pg.goto(f"{stack.url}/?lang=en-XA")
    assert pg.locator("html").get_attribute("lang") == "en-XA"
    problems += chrome_left(pg, "landing", ("slug", "acme", "GET /v1", "Authorization: Bearer", "key"))
    assert pg.locator('a[href="/v1/docs?lang=en-XA"]').count() >= 1  # the language goes on with the links
    pg.goto(f"{stack.url}/v1/docs?lang=en-XA")
    assert pg.locator("h4").count() > 10 and pg.locator("[data-operation]").count() > 10
    problems += chrome_left(pg, "reference", document_words=True)
    assert problems == []


def test_the_account_form_sends_only_what_changed():
    me = {"name": "Kenji", "locale": None}
    # a person signed in by SSO may not rename themselves: an unchanged name is not sent
    assert account_changes(me, {"name": "Kenji", "locale": "ja"}) == {"locale": "ja"}
    assert account_changes({**me, "locale": "ja"}, {"name": " Kenji ", "locale": ""}) == {"locale": None}
    assert account_changes(me, {"name": "Ken", "locale": ""}) == {"name": "Ken"}
    assert account_changes(me, {"name": "Kenji"}) == {}
    with pytest.raises(BadRequest):
        account_changes(me, {"name": "Kenji", "locale": "en-XA"})  # the pseudo-locale is no one's language


def test_the_platforms_pages_follow_the_browsers_language(stack):
    r = requests.get(stack.url + "/", headers={"Accept-Language": "de-AT,de;q=0.9,en;q=0.5"}, timeout=30)
    assert '<html lang="de"' in r.text and "Accept-Language" in r.headers["Vary"] and "Set-Cookie" not in r.headers
    asked = requests.get(stack.url + "/?lang=ja&workspace=acme", headers={"Accept-Language": "de"}, allow_redirects=False, timeout=30)
    assert asked.status_code == 303 and asked.headers["Location"] == "/b/acme?lang=ja"  # the board opens in it too
    assert '<html lang="en"' in requests.get(stack.url + "/v1/docs", headers={"Accept-Language": "xx"}, timeout=30).text


class Alternates(HTMLParser):
    """A page's ``<link rel="alternate" hreflang>`` (hreflang -> href) and its canonical address."""

    def __init__(self, html: str):
        super().__init__()
        self.languages: dict[str, str] = {}
        self.canonical: str | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and a.get("rel") == "alternate" and a.get("hreflang"):
            self.languages[a["hreflang"]] = a["href"]
        elif tag == "link" and a.get("rel") == "canonical":
            self.canonical = a["href"]


def test_indexable_pages_name_the_enabled_languages_for_search_engines(stack, workspace):
    site, root = Visitor(stack.url, workspace.slug), f"{stack.url}/b/{workspace.slug}"
    for path in ("", "/roadmap", "/changelog"):
        page = Alternates(site.get(path).text)
        assert page.languages == {**{tag: f"{root}{path}?lang={tag}" for tag in ENABLED}, "x-default": root + path}, path
        assert page.canonical == root + path
    # a page opened in one of them is that language's page; one not enabled names none
    german = Alternates(Visitor(stack.url, workspace.slug).get("/roadmap?lang=de").text)
    assert german.canonical == f"{root}/roadmap?lang=de" and german.languages["x-default"] == root + "/roadmap"
    assert Alternates(Visitor(stack.url, workspace.slug).get("/roadmap?lang=fr").text).canonical == root + "/roadmap"
    # a page kept out of search engines names no language either
    for path in ("/sign-in", "?q=export"):
        assert Alternates(site.get(path).text).languages == {}, path


@pytest.mark.parametrize("language", ["ar", "ja"])
def test_the_account_and_sign_in_pages_are_axe_clean_in_arabic_and_japanese(english_browser, stack, workspace, language):
    pg, site = english_browser, f"{stack.url}/b/{workspace.slug}"
    sign_in_as_team(pg, workspace, f"axe-{language}@example.com")
    problems = []
    for path in ("/account", "/sign-in"):
        pg.goto(f"{site}{path}?lang={language}")
        assert pg.locator("html").get_attribute("lang") == language
        assert pg.locator("html").get_attribute("dir") == ("rtl" if language == "ar" else "ltr")
        pg.screenshot(path=str(screenshots() / f"languages-{language}{path.replace('/', '-')}-390.png"), full_page=True)
        problems += page_problems(pg, f"{path} in {language}")
    assert problems == []
