"""The board's design (issue 37): text on the primary colour chosen by WCAG contrast, the vote
button readable in every state, status badges in their status's colour, "1 vote" and "2 votes",
sort tabs and status chips as plain links, and the board at 320 px without horizontal scrolling
or axe problems in light and dark, signed out and signed in with a vote."""

from __future__ import annotations

import re

import pytest

from web import shapes

from .browsing import page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, create_post

# WCAG 2 contrast of two computed CSS colours ("rgb(r, g, b)" or "rgba(...)"), in the page.
CONTRAST = """([a, b]) => {
  const lum = c => { const [r, g, b] = c.match(/[0-9.]+/g).slice(0, 3).map(Number).map(v => v / 255)
    .map(v => v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}"""
# The colour a button's text is drawn on: its own background, else its nearest ancestor's.
BACKGROUND = """e => { for (let n = e; n; n = n.parentElement) {
  const c = getComputedStyle(n).backgroundColor; if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c; }
  return 'rgb(255, 255, 255)'; }"""


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True)
    return Visitor(stack.url, workspace.slug)


def test_text_on_the_primary_colour_is_dark_on_a_light_one_and_light_on_a_dark_one():
    assert "--on-primary: #000000;" in shapes.theme_css({"primaryColor": "#facc15"}).body.decode()
    assert "--on-primary: #ffffff;" in shapes.theme_css({"primaryColor": "#1e3a8a"}).body.decode()
    assert "--on-primary: #000000;" in shapes.theme_css({"primaryColor": "#fff"}).body.decode()  # short form
    assert "--on-primary: #ffffff;" in shapes.theme_css({"primaryColor": "not a colour"}).body.decode()  # the default blue


def test_the_board_counts_votes_in_words_shows_status_colours_and_sorts_by_tabs(site, workspace):
    one, two = create_post(workspace, "One voter"), create_post(workspace, "Two voters")
    for post, voters in ((one, 1), (two, 2)):
        for i in range(voters):
            r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/vote", user=workspace.user_token(f"d-{post['id']}-{i}"))
            assert r.status_code in (200, 201), r.text
    board = site.get().text
    rows = {p["id"]: board.split(f'data-post-id="{p["id"]}"')[1].split("</li>")[0] for p in (one, two)}
    assert "1 vote<" in rows[one["id"]] and "1 votes" not in rows[one["id"]]
    assert "2 votes<" in rows[two["id"]]
    # the vote button shows the number and reads out the whole phrase
    assert re.search(r'<span class="count" aria-hidden="true" data-count>1</span>\s*<span class="sr-only">1 vote</span>', rows[one["id"]])
    assert re.search(r'<span class="count" aria-hidden="true" data-count>2</span>\s*<span class="sr-only">2 votes</span>', rows[two["id"]])
    # the status badge carries its status's colour (an SVG fill: the CSP allows no style attribute)
    badge = re.search(r'<span class="badge status-badge" data-status="open" data-color="#64748b">(.*?)</span>', rows[one["id"]], re.S)
    assert badge and '<circle cx="5" cy="5" r="5" fill="#64748b"/>' in badge.group(1) and badge.group(1).endswith("Open")
    assert 'style="' not in board
    # sort tabs and status chips are links keeping the other filters
    tabs = re.findall(r'<a href="([^"]+)" data-sort="(\w+)"( aria-current="page")?>', board)
    assert [(s, bool(current)) for _, s, current in tabs] == [("top", True), ("trending", False), ("new", False)]
    planned = site.get("?q=voter&sort=new&status=planned").text
    assert f'href="/b/{workspace.slug}?status=planned&amp;q=voter&amp;sort=top" data-sort="top"' in planned
    assert re.search(r'data-chip="planned" aria-current="page"', planned)
    assert '<input type="hidden" name="status" value="planned">' in planned and "No posts here yet" in planned


def colours(pg, selector: str) -> dict:
    button = pg.locator(selector)
    text = button.evaluate("e => getComputedStyle(e).color")
    count = button.locator(".count").evaluate("e => getComputedStyle(e).color")
    background = button.evaluate(BACKGROUND)
    return {"text": pg.evaluate(CONTRAST, [text, background]), "count": pg.evaluate(CONTRAST, [count, background])}


@pytest.mark.parametrize("primary", ["#2563eb", "#facc15"])
def test_the_vote_button_reads_at_4_5_to_1_voted_or_not_and_the_board_fits_320_px(page, site, stack, workspace, primary):
    """The voted and unvoted vote buttons' text and count against their background, light and
    dark, for a dark and a light primary colour; the board at 320 px, signed out and signed in
    with a vote: no horizontal scrolling, no serious axe problems; the menu opens without a script."""
    voted, other = create_post(workspace, "Voted design post"), create_post(workspace, "Unvoted design post")
    url = f"{stack.url}/b/{workspace.slug}"
    workspace.settings(primaryColor=primary)
    page.set_viewport_size({"width": 320, "height": 700})
    problems, shots = [], screenshots()
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        page.goto(url)
        assert page.locator("html").get_attribute("data-theme") == theme
        problems += page_problems(page, f"board {theme} signed out {primary}")
        page.screenshot(path=str(shots / f"board-design-{theme}-{primary[1:]}-signed-out-320.png"), full_page=True)
    # the phone's menu: closed, then open with a tap, no wider than the page
    assert not page.locator(".site-nav").is_visible()
    page.locator(".menu > summary").click()
    assert page.locator(".site-nav").is_visible() and page.get_by_role("link", name="Sign in").is_visible()
    problems += page_problems(page, f"board menu open {primary}")
    page.screenshot(path=str(shots / f"board-design-menu-{primary[1:]}-320.png"), full_page=True)

    sign_in_as_team(page, workspace, f"design-{primary[1:]}@example.com")
    page.goto(url)
    page.locator(f'[data-post-id="{voted["id"]}"] button.vote-button').click()
    page.wait_for_load_state()
    assert page.locator(f'[data-post-id="{voted["id"]}"] button.vote-button').get_attribute("aria-pressed") == "true"
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for width in (320, 1100):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto(url)
            on = colours(page, f'[data-post-id="{voted["id"]}"] button.vote-button')
            off = colours(page, f'[data-post-id="{other["id"]}"] button.vote-button')
            assert min(on.values()) >= 4.5 and min(off.values()) >= 4.5, (theme, primary, on, off)
            page.screenshot(path=str(shots / f"board-design-{theme}-{primary[1:]}-voted-{width}.png"), full_page=True)
            problems += page_problems(page, f"board {theme} signed in {primary} {width}")
    # the status badge's dot is drawn in the status's colour
    dot = page.locator(f'[data-post-id="{voted["id"]}"] .badge[data-status] circle')
    assert dot.evaluate("e => getComputedStyle(e).fill") == "rgb(100, 116, 139)"
    # from 48rem the navigation is shown without opening the menu
    assert page.get_by_role("link", name="Admin", exact=True).is_visible() and not page.locator(".menu > summary").is_visible()
    assert problems == []
