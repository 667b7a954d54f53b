"""People on posts and comments (a byline: an avatar, else generated initials, a name, a relative
date with the exact time), the post page, the roadmap as columns of cards and the changelog as
cards: the filters, the pages through the gateway, then in Chromium (axe, 390 px, both themes)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from common import i18n
from web import render

from .browsing import DESKTOP, PHONE, page_problems, screenshots
from .helpers import Visitor, create_post, csrf_of, team_member

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def ago(**delta) -> str:
    return (NOW - timedelta(**delta)).isoformat().replace("+00:00", "Z")


def test_relative_dates_and_exact_times():
    assert render.relative(ago(seconds=20), NOW) == "just now"
    assert render.relative(ago(minutes=1), NOW) == "1 minute ago"
    assert render.relative(ago(minutes=5), NOW) == "5 minutes ago"
    assert render.relative(ago(hours=2), NOW) == "2 hours ago"
    assert render.relative(ago(days=3), NOW) == "3 days ago"
    assert render.relative(ago(days=65), NOW) == "2 months ago"
    assert render.relative(ago(days=800), NOW) == "2 years ago"
    assert render.relative("2026-11-28T00:00:00Z", NOW) == "just now"  # a clock a little ahead
    assert render.relative("not a date", NOW) == "not a date"[:10] and render.relative(None, NOW) == ""
    assert render.relative("2026-11-24T12:00:00", NOW) == "3 days ago"  # no zone: UTC
    assert render.exact("2026-11-24T09:05:00+01:00").replace("\u202f", " ") == "Nov 24, 2026, 8:05 AM UTC"


def test_dates_and_times_in_the_readers_language():
    with i18n.using("de"):
        assert render.relative(ago(days=3), NOW) == "vor 3 Tagen"
        assert render.exact("2026-11-24T09:05:00+01:00") == "24.11.2026, 08:05 UTC"
    with i18n.using("ja"):
        assert render.relative(ago(hours=2), NOW) == "2 時間前"
    with i18n.using("pl"):  # Polish has three plural forms
        assert [render.relative(ago(days=n), NOW) for n in (1, 2, 5)] == ["1 dzień temu", "2 dni temu", "5 dni temu"]


def test_initials_colours_and_avatar_addresses():
    assert render.initials("Ada Lovelace") == "AL" and render.initials("grace") == "G"
    assert render.initials("Jean-Luc de la Picard") == "JP" and render.initials("ada.l@example.com") == "AC"
    assert render.initials("") == "?" and render.initials(None) == "?" and render.initials("  ...  ") == "?"
    assert render.hue("Ada Lovelace") == render.hue("Ada Lovelace")
    assert {render.hue(f"person {i}") for i in range(200)} == set(range(render.HUES))
    assert render.https_url("https://cdn.example.com/a.png") == "https://cdn.example.com/a.png"
    for bad in ("http://cdn.example.com/a.png", "/me.png", "//evil.example/a.png", "https:/path", "javascript:alert(1)",
                "https://a.example/x y.png", None, 7):
        assert render.https_url(bad) is None, bad
    assert render.hex_color("#A1b2C3") == "#A1b2C3"
    assert render.hex_color("red") is None and render.hex_color("#123") is None and render.hex_color('#fff"><x') is None


def test_avatar_macro_image_or_initials():
    env = render.environment()
    people = env.get_template("people.html").module
    image = str(people.avatar({"name": "Ada Lovelace", "avatarUrl": "https://cdn.example.com/ada.png"}))
    assert '<img class="avatar" src="https://cdn.example.com/ada.png" alt=""' in image
    made = str(people.avatar({"name": "Ada Lovelace", "avatarUrl": "http://cdn.example.com/ada.png"}))
    assert "<img" not in made and re.search(r'<span class="avatar hue-\d+" aria-hidden="true">AL</span>', made)
    byline = str(people.byline({"name": "Ada <b>", "team": True}, "2026-11-24T12:00:00Z"))
    assert '<span class="author">Ada &lt;b&gt;</span> <span class="badge team">Team</span>' in byline
    assert '<time datetime="2026-11-24T12:00:00Z" title="Nov 24, 2026, 12:00\u202fPM UTC">' in byline
    customer = str(people.byline({"name": None, "label": "Customer"}, None))
    assert 'class="avatar hue-none"' in customer and '<span class="author anonymous">Customer</span>' in customer and "<time" not in customer


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True)
    return Visitor(stack.url, workspace.slug)


def _thread(site, workspace):
    """A post with a named team reply, an API key's reply and a customer's comment."""
    post = create_post(workspace, "Accessible dark mode", "Some **markdown** content, long enough to wrap on a phone's screen.")
    member = team_member(site.base, workspace, "grace.hopper@example.com")
    page = member.get("/account")
    member.post("/account", {"csrf": csrf_of(page.text), "name": "Grace Hopper"})
    member.post(f"/p/{post['id']}/comments", {"csrf": csrf_of(member.get(f"/p/{post['id']}").text), "content": "On our list."})
    workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", key=workspace.key, json={"content": "Thanks!"})
    customer = Visitor(site.base, workspace.slug)
    r = customer.post(f"/p/{post['id']}/comments", {"csrf": customer.csrf(f"/p/{post['id']}"), "content": "Me too"})
    assert r.status_code == 200, r.text
    return post, member, customer


def test_the_post_page_shows_who_wrote_each_comment_and_when(site, workspace):
    post, member, customer = _thread(site, workspace)
    page = site.get(f"/p/{post['id']}").text
    # the post: content first, then the thread; when it was posted, relative with the exact time
    assert page.index('class="content"') < page.index('id="comments-h"')
    assert re.search(r'Posted <time datetime="[^"]+" title="[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d\u202f[AP]M UTC">'
                     r'(just now|\d+ minutes? ago)</time>', page)
    # a named team member: generated initials on a colour, the name and the badge
    assert re.search(r'<span class="avatar hue-\d+" aria-hidden="true">GH</span><span class="who-when"><span class="author">Grace Hopper</span> '
                     r'<span class="badge team">Team</span>', page)
    # an API key's reply: the team badge without a name; a customer, whom the API does not name
    assert '<span class="author anonymous">Team member</span> <span class="badge team">Team</span>' in page
    assert '<span class="author anonymous">Customer</span>' in page
    assert page.count('<li id="c-') == 3 and page.count("<time datetime=") >= 4
    # the team member sees their own comment under their name; an anonymous customer's comment
    # is nobody's to edit, so it shows to them as any customer's
    assert '<span class="author">Grace Hopper</span>' in member.get(f"/p/{post['id']}").text
    assert '<span class="author anonymous">Customer</span>' in customer.get(f"/p/{post['id']}").text


def test_the_roadmap_shows_columns_of_cards_with_counts_and_colours(site, workspace):
    a = create_post(workspace, "Planned thing")
    b = create_post(workspace, "Another planned thing")
    c = create_post(workspace, "Being built")
    for p, status in ((a, "planned"), (b, "planned"), (c, "in-progress")):
        r = workspace.api.patch(f"{workspace.path}/posts/{p['id']}", key=workspace.key, json={"statusSlug": status})
        assert r.status_code == 200, r.text
    voted = workspace.api.post(f"{workspace.path}/posts/{a['id']}/vote", user=workspace.user_token("u-1"))
    assert voted.status_code in (200, 201), voted.text
    page = site.get("/roadmap").text
    columns = re.findall(r'<section class="column" aria-labelledby="col-([a-z0-9-]+)" data-status="\1" data-color="(#[0-9a-fA-F]{6})">'
                         r'.*?<span class="count" data-count="(\d+)">', page, re.S)
    shown = {slug: (color, int(n)) for slug, color, n in columns}
    assert shown["planned"][1] == 2 and shown["in-progress"][1] == 1
    statuses = {s["slug"]: s for s in workspace.api.get(f"{workspace.path}/statuses", key=workspace.key).json()["items"]}
    for slug, (color, _) in shown.items():
        assert color == statuses[slug]["color"]
        assert f'<circle cx="5" cy="5" r="5" fill="{color}"/>' in page
    card = re.search(rf'<li class="roadmap-card" data-post-id="{a["id"]}">(.*?)</li>', page, re.S).group(1)
    assert f'href="/b/{workspace.slug}/p/{a["id"]}">Planned thing</a>' in card
    # each card votes as the board does (its count readable, the visitor's own vote shown)
    assert re.search(rf'<form method="post" action="/b/{workspace.slug}/p/{a["id"]}/vote" class="vote">', card)
    assert re.search(r'<span class="count" aria-hidden="true" data-count>1</span>\s*<span class="sr-only">1 vote</span>', card)
    assert "style=" not in page
    # a vote from the roadmap comes back to the roadmap, the card pressed
    r = site.post(f"/p/{b['id']}/vote", {"csrf": csrf_of(page), "next": f"/b/{workspace.slug}/roadmap", "action": "vote"})
    assert r.status_code == 200 and r.url.endswith("/roadmap"), r.text
    card = re.search(rf'<li class="roadmap-card" data-post-id="{b["id"]}">(.*?)</li>', r.text, re.S).group(1)
    assert 'aria-pressed="true"' in card and re.search(r'data-count>1</span>', card)


def test_the_post_roadmap_and_changelog_pages_pass_axe_at_390px_in_both_themes(site, workspace, page):
    post, _, _ = _thread(site, workspace)
    workspace.api.patch(f"{workspace.path}/posts/{post['id']}", key=workspace.key, json={"statusSlug": "planned"})
    create_post(workspace, "A second idea with a rather long title that has to wrap inside its roadmap card")
    workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key,
                       json={"title": "Dark mode is here", "slug": "dark", "content": "We shipped **dark mode**.",
                             "postIds": [post["id"]], "publish": True})
    base = site.url()
    problems = []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for name, path in (("post", f"/p/{post['id']}"), ("roadmap", "/roadmap"), ("changelog", "/changelog")):
            page.goto(base + path)
            assert page.locator("html").get_attribute("data-theme") == theme
            for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
                page.set_viewport_size(size)
                page.screenshot(path=str(screenshots() / f"board-{name}-{theme}{suffix}.png"), full_page=True)
                problems += page_problems(page, f"{name} {theme}{suffix}")
    assert problems == []
    page.goto(base + "/changelog")
    page.click("article.entry a:has-text('Accessible dark mode')")
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Accessible dark mode"


def test_the_changelog_email_form_works_without_javascript(site, workspace, browser, page, maildir):
    """"Get updates by email" in a browser without JavaScript: the form posts, and the page it
    comes back to says what happens next (the same words for any address), axe-clean at 390 px
    (checked in a browser with JavaScript: axe is a script); the address gets the mail to confirm."""
    from testkit.mail import wait_for_mail

    email = f"reader-{datetime.now().strftime('%H%M%S%f')}@example.com"
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    context.set_default_timeout(15_000)
    try:
        pg = context.new_page()
        pg.goto(site.url() + "/changelog")
        pg.get_by_label("Email address").fill(email)
        pg.get_by_role("button", name="Subscribe").click()
        pg.wait_for_url(re.compile(r"/changelog\?subscribe=sent"))
        notice = pg.get_by_role("status").inner_text()
        assert "If that address is not subscribed yet" in notice
        shown = pg.url
    finally:
        context.close()
    page.set_viewport_size(PHONE)
    page.goto(shown)
    assert page.get_by_role("status").inner_text() == notice
    page.screenshot(path=str(screenshots() / "changelog-subscribed-phone.png"), full_page=True)
    assert page_problems(page, "changelog subscribed") == []
    assert "Confirm your subscription" in wait_for_mail(maildir, to=email, timeout=30)["Subject"]
