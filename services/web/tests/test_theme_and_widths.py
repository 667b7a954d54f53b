"""The visitor's theme, dates in their time zone, and every page at 320 px (issue 37).

The footer's Light / Dark / System choice is a cookie the server reads, so it holds across pages
and reloads with or without JavaScript; "System" follows the device's colour scheme through CSS
alone. site.js writes times in the browser's own zone. No page, public or admin, is wider than a
320 px phone, and axe finds nothing on the board in the dark theme chosen here, nor at 390 px
signed in after voting. One workspace and one browser for the module."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from testkit.api import create_workspace

from web.admin import NAVIGATION

from .browsing import PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, create_post

NARROW = {"width": 320, "height": 640}
DARK_BG, LIGHT_BG = "rgb(13, 17, 23)", "rgb(255, 255, 255)"
# The page's width against the window's, and when wider the elements that stick out furthest
# (so a failure names what to fix).
WIDTH = """() => {
  const view = window.innerWidth, wide = document.documentElement.scrollWidth;
  const out = [...document.querySelectorAll('body *')].map(e => [e, e.getBoundingClientRect().right])
    .filter(([e, right]) => right > view + 0.5).sort((a, b) => b[1] - a[1]).slice(0, 3)
    .map(([e, right]) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
         (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '') +
         ' to ' + Math.round(right) + ' px');
  return {view, wide, out};
}"""


@pytest.fixture(scope="module")
def seeded(api, admin_token):
    """A workspace with a board, a planned post with a comment and a vote, and a published
    changelog entry: something on every page."""
    workspace = create_workspace(api, admin_token, name="Theme and widths")
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True, theme="light")
    post = create_post(workspace, "Export every report as a spreadsheet with one click, including archived ones",
                       "We send these to finance each month.")
    create_post(workspace, "Dark mode")
    r = workspace.api.patch(f"{workspace.path}/posts/{post['id']}", key=workspace.key, json={"statusSlug": "planned"})
    assert r.status_code == 200, r.text
    r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", user=workspace.user_token("ada", name="Ada Lovelace"),
                           json={"content": "Yes please, and CSV too."})
    assert r.status_code == 201, r.text
    r = workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key,
                           json={"title": "Spreadsheet export", "slug": "export", "content": "Reports export to **XLSX**.",
                                 "postIds": [post["id"]], "publish": True})
    assert r.status_code == 201, r.text
    return workspace, post


@pytest.fixture(scope="module")
def base(stack, seeded) -> str:
    return f"{stack.url}/b/{seeded[0].slug}"


def choice(pg, name: str):
    """The footer's theme button ``name``."""
    return pg.get_by_role("group", name="Theme").get_by_role("button", name=name, exact=True)


def background(pg) -> str:
    return pg.evaluate("getComputedStyle(document.body).backgroundColor")


def test_the_theme_form_sets_a_cookie_and_comes_back_only_to_this_board(stack, seeded):
    workspace, post = seeded
    visitor = Visitor(stack.url, workspace.slug)
    here = f"/b/{workspace.slug}/p/{post['id']}"
    r = visitor.post("/theme", {"theme": "dark", "next": here}, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == here
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith("fb_theme=dark;") and "Path=/" in cookie and "SameSite=Lax" in cookie and "HttpOnly" not in cookie
    assert "Max-Age=31536000" in cookie
    assert '<html lang="en" dir="ltr" data-theme="dark">' in visitor.get(f"/p/{post['id']}").text
    for elsewhere in ("https://evil.example/b/x", "//evil.example", f"/b/{workspace.slug}//evil.example", "/b/other",
                      f"/b/{workspace.slug}\\@evil", None):
        r = visitor.post("/theme", {"theme": "light", **({"next": elsewhere} if elsewhere else {})}, allow_redirects=False)
        assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}", elsewhere
    r = visitor.post("/theme", {"theme": "purple", "next": here}, allow_redirects=False)
    assert r.status_code == 400 and "fb_theme" not in r.headers.get("Set-Cookie", "")
    assert '<html lang="en" dir="ltr" data-theme="light">' in visitor.get().text  # the last good choice


def test_the_choice_holds_across_pages_and_reloads_without_javascript(browser, base, seeded):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    try:
        pg.goto(base + "/roadmap")
        assert pg.locator("html").get_attribute("data-theme") == "light"  # the board's own, until chosen
        assert choice(pg, "Light").get_attribute("aria-pressed") == "true"
        choice(pg, "Dark").click()
        pg.wait_for_url(base + "/roadmap")
        assert pg.locator("html").get_attribute("data-theme") == "dark" and background(pg) == DARK_BG
        assert choice(pg, "Dark").get_attribute("aria-pressed") == "true"
        for path in ("/changelog", f"/p/{seeded[1]['id']}"):
            pg.goto(base + path)
            assert pg.locator("html").get_attribute("data-theme") == "dark", path
        pg.reload()
        assert background(pg) == DARK_BG
    finally:
        context.close()


def test_the_toggle_switches_in_place_system_follows_the_device_and_times_are_local(browser, base, seeded):
    workspace, post = seeded
    context = browser.new_context(color_scheme="dark", timezone_id="Asia/Tokyo", locale="en-US")
    pg = context.new_page()
    try:
        pg.goto(base)
        assert background(pg) == LIGHT_BG  # the board's light theme, whatever the device prefers
        pg.evaluate("window.notReloaded = true")
        choice(pg, "System").click()
        assert pg.evaluate("window.notReloaded") is True  # switched in place
        assert pg.locator("html").get_attribute("data-theme") == "system" and background(pg) == DARK_BG
        assert choice(pg, "System").get_attribute("aria-pressed") == "true"
        assert choice(pg, "Light").get_attribute("aria-pressed") == "false"
        assert {c["name"]: c["value"] for c in context.cookies()}["fb_theme"] == "system"
        pg.reload()  # the server draws the choice from the cookie the script wrote
        assert pg.locator("html").get_attribute("data-theme") == "system" and background(pg) == DARK_BG
        pg.emulate_media(color_scheme="light")
        assert background(pg) == LIGHT_BG
        pg.emulate_media(color_scheme="dark")
        choice(pg, "Dark").click()
        pg.goto(base)
        assert pg.locator("html").get_attribute("data-theme") == "dark"
        problems = page_problems(pg, "board, dark chosen by the visitor")
        pg.screenshot(path=str(screenshots() / "theme-board-dark-chosen.png"), full_page=True)

        # Times: the server's exact title is UTC; the script's is Tokyo's (UTC+9, no summer time).
        pg.goto(f"{base}/p/{post['id']}")
        time = pg.locator("article.post time").first
        iso = time.get_attribute("datetime")
        assert "(Asia/Tokyo)" in time.get_attribute("title") and "UTC" not in time.get_attribute("title")
        tokyo = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo("Asia/Tokyo"))
        said = f"{tokyo:%b} {tokyo.day}, {tokyo.year}, {tokyo.hour % 12 or 12}:{tokyo.minute:02d} {'AM' if tokyo.hour < 12 else 'PM'}"
        assert time.get_attribute("title").replace("\u202f", " ") == said + " (Asia/Tokyo)"  # ICU may use a narrow space
        pg.goto(base + "/changelog")
        day = pg.locator(".changelog-card time").first
        assert "(Asia/Tokyo)" in day.get_attribute("title")
        assert day.inner_text() == pg.evaluate("iso => new Intl.DateTimeFormat('en-US', {dateStyle: 'medium', timeZone: "
                                               "'Asia/Tokyo'}).format(new Date(iso))", day.get_attribute("datetime"))
        problems += page_problems(pg, "changelog, dark chosen by the visitor")
    finally:
        context.close()
    assert problems == []


def test_the_exact_time_without_javascript_says_utc(stack, seeded):
    workspace, post = seeded
    html = Visitor(stack.url, workspace.slug).get(f"/p/{post['id']}").text
    assert " UTC\">" in html


def fits(pg, name: str) -> list:
    width = pg.evaluate(WIDTH)
    return [] if width["wide"] <= width["view"] else [(name, f"{width['wide']} px wide in {width['view']} px", width["out"])]


def test_no_page_is_wider_than_a_320_px_phone_and_axe_is_clean_at_390_px_after_voting(browser, base, seeded):
    workspace, post = seeded
    context = browser.new_context(viewport=NARROW)
    context.set_default_timeout(15_000)
    pg = context.new_page()
    shots, too_wide = screenshots(), []
    try:
        public = {"board": "", "post": f"/p/{post['id']}", "roadmap": "/roadmap", "changelog": "/changelog",
                  "new": "/new", "sign-in": "/sign-in"}
        for name, path in public.items():
            pg.goto(base + path)
            too_wide += fits(pg, name)
            pg.screenshot(path=str(shots / f"width-320-{name}.png"), full_page=True)
        sign_in_as_team(pg, workspace, "widths@example.com")
        signed_in = {"account": "/account", "notifications": "/account/notifications",
                     **{f"admin{e.path or ' overview'}": "/admin" + e.path for e in NAVIGATION}}
        for name, path in signed_in.items():
            pg.goto(base + path)
            assert pg.locator("main").count() == 1, name
            too_wide += fits(pg, name)
            pg.screenshot(path=str(shots / f"width-320-{name.replace('/', '-').replace(' ', '-')}.png"), full_page=True)
        assert too_wide == []

        pg.set_viewport_size(PHONE)
        pg.goto(base)
        vote = pg.locator(f'[data-post-id="{post["id"]}"] button.vote-button')
        vote.click()
        pg.wait_for_load_state()
        assert vote.get_attribute("aria-pressed") == "true"
        problems = page_problems(pg, "board at 390 px, signed in, voted")
        pg.goto(f"{base}/p/{post['id']}")
        problems += page_problems(pg, "post at 390 px, signed in, voted")
    finally:
        context.close()
    assert problems == []
