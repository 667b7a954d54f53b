"""The admin overview (/admin): activity charts drawn on the server as SVG with their numbers in
text, posts by status, the most voted posts, and a getting-started checklist for a new
workspace; through the gateway without JavaScript, then in Chromium (axe, 390 px, both themes)."""

from __future__ import annotations

import html
import re

from testkit import wait_for

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, create_post, sso_sign_in, team_member


def chart_text(page: str, metric: str) -> str:
    """A chart's text alternative: its title and description."""
    svg = re.search(rf'<figure class="chart panel" data-metric="{metric}">.*?</svg>', page, re.S)
    assert svg, f"no {metric} chart on the page"
    title = re.search(r"<title id=[^>]*>([^<]*)</title>", svg.group(0)).group(1)
    desc = re.search(r"<desc id=[^>]*>([^<]*)</desc>", svg.group(0)).group(1)
    return html.unescape(f"{title}. {desc}")


def today_row(page: str) -> list[int]:
    """The numbers table's newest row: posts, votes, comments."""
    row = re.search(r'<tr><th scope="row"><time datetime="[0-9-]+">[^<]+</time></th>((?:<td>\d+</td>){3})</tr>', page)
    assert row, "no numbers table"
    return [int(n) for n in re.findall(r"<td>(\d+)</td>", row.group(1))]


def checklist(page: str) -> dict[str, bool]:
    return {label: state == "done" for state, label in
            re.findall(r'<li class="(done|todo)">.*?<a href="[^"]*">([^<]+)</a>', page, re.S)}


def test_the_overview_counts_what_people_did_and_guides_a_new_workspace(stack, workspace):
    owner = team_member(stack.url, workspace, "overview-owner@example.com")
    page = owner.get("/admin")
    assert page.status_code == 200 and "<h1>Overview</h1>" in page.text
    # a new workspace: no board, no post, no branding; its operator-made key counts as a key
    assert checklist(page.text) == {"Create a board": False, "Set your branding": False, "Write the first post": False,
                                    "Create an API key": True}
    base = f"/b/{workspace.slug}"
    for path in ("/admin/boards", "/admin/settings", "/admin/api-keys"):
        assert f'href="{base}{path}"' in page.text
    assert "0 posts in all" in chart_text(page.text, "posts") and "No post yet." in page.text
    assert 'href="/b/%s/admin?days=30" aria-current="true"' % workspace.slug in page.text

    workspace.board("features", "Feature requests")
    first = create_post(workspace, "Dark mode")
    second = create_post(workspace, "Export to CSV")
    for user in ("ov-a", "ov-b"):
        r = workspace.api.post(f"{workspace.path}/posts/{first['id']}/vote", user=workspace.user_token(user))
        assert r.status_code == 201, r.text
    r = workspace.api.post(f"{workspace.path}/posts/{second['id']}/vote", user=workspace.user_token("ov-a"))
    assert r.status_code == 201, r.text
    for post in (first, second, second):
        r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", key=workspace.key, json={"content": "Noted"})
        assert r.status_code == 201, r.text
    assert workspace.api.patch(f"{workspace.path}/posts/{second['id']}", key=workspace.key,
                               json={"statusSlug": "planned"}).status_code == 200

    page = owner.get("/admin")
    assert "2 posts in all. The busiest day" in chart_text(page.text, "posts")
    assert "3 votes in all" in chart_text(page.text, "votes") and "3 comments in all" in chart_text(page.text, "comments")
    assert today_row(page.text) == [2, 3, 3]
    assert len(re.findall(r'<tr><th scope="row"><time', page.text)) == 30
    assert re.search(r'<title id="status-t">2 posts: [^<]*Planned 1 \(50%\)', page.text)
    # the most voted first, linked to its page
    top = re.findall(r'<li><a href="/b/[^/]+/p/([0-9a-f]{24})">', page.text)
    assert top == [first["id"], second["id"]]
    ticks = checklist(page.text)
    assert ticks["Create a board"] and ticks["Write the first post"] and not ticks["Set your branding"]
    # the other period, and a period the page does not offer (the first is shown)
    ninety = owner.get("/admin?days=90")
    assert "Votes a day, last 90 days" in chart_text(ninety.text, "votes") and today_row(ninety.text) == [2, 3, 3]
    assert len(re.findall(r'<tr><th scope="row"><time', ninety.text)) == 90
    assert "last 30 days" in chart_text(owner.get("/admin?days=7").text, "votes")
    # branded: the checklist is done and gone
    workspace.settings(primaryColor="#0f766e")
    assert "Getting started" not in owner.get("/admin").text

    # a manager sees it too; an end user and an anonymous visitor are sent to sign in
    manager = team_member(stack.url, workspace, "overview-manager@example.com", "manager")
    assert "3 votes in all" in chart_text(manager.get("/admin").text, "votes")
    anonymous = Visitor(stack.url, workspace.slug)
    user = Visitor(stack.url, workspace.slug)
    sso_sign_in(user, workspace.user_token("ov-reader"))
    for who in (anonymous, user):
        r = who.get("/admin", allow_redirects=False)
        assert r.status_code == 303 and r.headers["Location"].startswith(f"/b/{workspace.slug}/sign-in?next=")
    # the numbers come from the team's API: anyone else is refused there
    assert workspace.api.get(f"{workspace.path}/posts/activity", user=workspace.user_token("ov-a")).status_code == 403


def test_the_overview_in_a_browser(page, stack, workspace):
    """The checklist leads to the submit page; the post written there is on the board, and
    counted on the overview; then axe and the width, in light and dark, on a desktop and a phone."""
    workspace.board("features", "Feature requests")
    sign_in_as_team(page, workspace, "overview-browser@example.com")
    admin = f"{stack.url}/b/{workspace.slug}/admin"
    page.goto(admin)
    posts = page.locator('figure[data-metric="posts"] .chart-total')
    assert posts.inner_text() == "0"
    page.get_by_role("link", name="Write the first post").click()
    page.fill("#n-title", "Keyboard shortcuts")
    page.get_by_role("button", name="Submit", exact=True).click()
    page.wait_for_load_state()
    assert wait_for(lambda: any(p["title"] == "Keyboard shortcuts" for p in
                                workspace.api.get(f"{workspace.path}/posts", key=workspace.key).json()["items"]))
    page.goto(admin)
    assert posts.inner_text() == "1"
    assert "1 post in all" in page.locator("#chart-posts-d").text_content()
    assert page.locator(".checklist li.done", has_text="Write the first post").count() == 1
    page.get_by_role("link", name="Last 90 days").click()
    page.wait_for_url(re.compile(r"days=90$"))
    assert page.get_by_role("img", name=re.compile("Posts a day, last 90 days")).count() == 1
    problems = []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        page.reload()
        assert page.locator("html").get_attribute("data-theme") == theme
        page.locator(".chart-numbers summary").click()  # the numbers' table open: checked too
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.screenshot(path=str(screenshots() / f"admin-overview-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"overview {theme}{suffix}")
    assert problems == []
