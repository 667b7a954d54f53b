"""The admin area's changelog editor (/admin/changelog): the entries, drafts and published; an
entry's editor with its server-rendered preview, the post picker (a search whose matches are
checkboxes, the linked posts kept ticked), saving a draft and publishing it, as a browser
without JavaScript uses it and in Chromium (axe, a 390 px phone, light and dark theme)."""

from __future__ import annotations

import re

import pytest

from services.notifications.tests.helpers import Person, wait_for_notification

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, create_post, csrf_of, team_member


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    return Visitor(stack.url, workspace.slug)


def entries(workspace) -> list[dict]:
    r = workspace.api.get(f"{workspace.path}/changelogs", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def boxes(html: str) -> dict[str, bool]:
    """The picker's checkboxes: post id -> ticked."""
    return {m.group(2): bool(m.group(3)) for m in
            re.finditer(r'<input type="checkbox" id="link-([0-9a-f]{24})" name="postIds" value="([0-9a-f]{24})"( checked)?>', html)}


def test_a_manager_writes_previews_links_saves_and_publishes_an_entry_without_javascript(site, workspace):
    dark, csv = create_post(workspace, "Dark mode"), create_post(workspace, "Export to CSV")
    manager = team_member(site.base, workspace, "changelog-manager@example.com", "manager")
    listing = manager.get("/admin/changelog")
    assert listing.status_code == 200 and "Nothing written yet" in listing.text
    assert f'href="/b/{workspace.slug}/admin/changelog" aria-current="page"' in listing.text
    new = manager.get("/admin/changelog/new")
    assert new.status_code == 200 and 'name="slug"' in new.text and "Save draft" in new.text
    typed = {"csrf": csrf_of(new.text), "title": "Night shift", "slug": "night-shift",
             "content": "We shipped **dark mode**.\n\n<script>alert(1)</script>"}

    # the preview renders the markdown on the server, sanitised, and saves nothing
    shown = manager.post("/admin/changelog/new", {**typed, "action": "preview"})
    assert shown.status_code == 200 and "<strong>dark mode</strong>" in shown.text
    assert "<script>alert(1)</script>" not in shown.text and 'value="night-shift"' in shown.text
    assert entries(workspace) == []

    # the picker: a search shows matches as boxes, unticked; ticked ones stay ticked
    found = manager.post("/admin/changelog/new", {**typed, "action": "search", "q": "dark"})
    assert found.status_code == 200 and boxes(found.text) == {dark["id"]: False}
    found = manager.post("/admin/changelog/new", [*typed.items(), ("action", "search"), ("q", "csv"), ("postIds", dark["id"])])
    assert boxes(found.text) == {dark["id"]: True, csv["id"]: False} and "Night shift" in found.text
    nothing = manager.post("/admin/changelog/new", {**typed, "action": "search", "q": "zebra crossing"})
    assert "No other post matches" in nothing.text

    # saved as a draft, linking the ticked post: the team's, not the public changelog's
    r = manager.post("/admin/changelog/new", [*typed.items(), ("action", "save"), ("postIds", dark["id"])], allow_redirects=False)
    assert r.status_code == 303
    [entry] = entries(workspace)
    assert r.headers["Location"] == f"/b/{workspace.slug}/admin/changelog/{entry['id']}?done=saved"
    assert entry["publishedAt"] is None and entry["postIds"] == [dark["id"]] and entry["slug"] == "night-shift"
    assert "Night shift" not in site.get("/changelog").text
    listed = manager.get("/admin/changelog").text
    assert 'class="badge draft">Draft' in listed and f'data-entry-id="{entry["id"]}"' in listed

    # the editor again: the linked post ticked, the slug fixed; a second entry with its slug is refused
    editor = manager.get(f"/admin/changelog/{entry['id']}?done=saved")
    assert "Draft saved." in editor.text and boxes(editor.text) == {dark["id"]: True}
    assert 'id="cl-slug" value="night-shift" readonly' in editor.text
    again = manager.post("/admin/changelog/new", {**typed, "title": "Twice", "action": "save"})
    assert again.status_code == 409 and re.search(r'role="alert">[^<]*already exists', again.text)
    assert 'value="Twice"' in again.text and len(entries(workspace)) == 1
    blank = manager.post(f"/admin/changelog/{entry['id']}", {"csrf": typed["csrf"], "title": "", "content": "x", "action": "save"})
    assert blank.status_code == 400 and 'role="alert"' in blank.text

    # published with both posts: on the public changelog, linking them; no Publish button after
    r = manager.post(f"/admin/changelog/{entry['id']}", [("csrf", typed["csrf"]), ("title", "Night shift"),
                                                         ("content", "We shipped **dark mode** and CSV."), ("action", "publish"),
                                                         ("postIds", dark["id"]), ("postIds", csv["id"])])
    assert r.status_code == 200 and "Published: the followers" in r.text and "Publish</button>" not in r.text
    [entry] = entries(workspace)
    assert entry["publishedAt"] and entry["postIds"] == [dark["id"], csv["id"]]
    public = site.get("/changelog").text
    assert "Night shift" in public and f'/p/{csv["id"]}' in public
    assert 'class="badge published">Published' in manager.get("/admin/changelog").text

    # nobody outside the team
    stranger = Visitor(site.base, workspace.slug)
    r = stranger.get("/admin/changelog/new", allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"].startswith(f"/b/{workspace.slug}/sign-in?next=")
    assert stranger.get("/admin/changelog", allow_redirects=False).status_code == 303
    r = stranger.post("/admin/changelog/new", {"csrf": csrf_of(stranger.get().text), **{k: v for k, v in typed.items() if k != "csrf"},
                                               "slug": "sneaky", "action": "publish"})
    assert r.status_code == 403 and len(entries(workspace)) == 1
    assert manager.get("/admin/changelog/0123456789abcdef01234567").status_code == 404


def test_the_changelog_editor_in_a_browser_light_dark_and_on_a_phone(page, site, workspace, maildir):
    """In Chromium a manager writes an entry, previews it, links a voted post through the picker
    and publishes: the public changelog shows it and the voter is mailed. The list and the editor
    (with a preview and matches shown) have no serious axe violation and fit a 390 px phone, in
    light and dark theme."""
    voter = Person(workspace, maildir, "cl-voter")
    wanted = create_post(workspace, "Keyboard shortcuts for the board")
    create_post(workspace, "Keyboard layout for Dvorak users")
    assert voter.call("POST", f"/posts/{wanted['id']}/vote").status_code in (200, 201)
    sign_in_as_team(page, workspace, "browser-changelog@example.com", "manager")
    base = f"{site.base}/b/{workspace.slug}"
    page.goto(base + "/admin/changelog")
    page.get_by_role("link", name="New entry").click()
    page.wait_for_load_state()
    page.fill("#cl-title", "Faster with the keyboard")
    page.fill("#cl-slug", "keyboard")
    page.fill("#cl-content", "Press **?** to see every shortcut.")
    page.get_by_role("button", name="Preview").click()
    page.wait_for_load_state()
    assert page.locator(".entry-preview .content strong").inner_text() == "?"
    page.fill("#cl-q", "keyboard shortcuts")
    page.get_by_role("button", name="Search").click()
    page.wait_for_load_state()
    page.check(f"#link-{wanted['id']}")
    page.get_by_role("button", name="Publish").click()
    page.wait_for_load_state()
    assert "Published" in page.locator("p.notice[role=status]").inner_text()
    assert page.is_checked(f"#link-{wanted['id']}")
    [mail] = wait_for_notification(maildir, voter.email, "Shipped")
    assert mail["Subject"] == "Shipped: Keyboard shortcuts for the board"
    page.goto(base + "/changelog")
    assert page.locator("article.entry h2").first.inner_text() == "Faster with the keyboard"
    # a draft beside it, for the list
    r = workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key,
                           json={"title": "Next: offline mode", "slug": "offline", "content": "Soon."})
    assert r.status_code == 201, r.text
    entry_url = f"{base}/admin/changelog/{entries(workspace)[1]['id']}"

    problems = []
    shots = screenshots()
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.goto(base + "/admin/changelog")
            assert page.locator("html").get_attribute("data-theme") == theme
            assert page.locator(".changelog-entries tbody tr").count() == 2
            page.screenshot(path=str(shots / f"admin-changelog-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"changelog {theme}{suffix}")
            page.goto(entry_url)
            page.fill("#cl-q", "keyboard")
            page.get_by_role("button", name="Search").click()
            page.wait_for_load_state()
            page.get_by_role("button", name="Preview").click()
            page.wait_for_load_state()
            assert page.locator(".entry-preview").count() == 1
            page.screenshot(path=str(shots / f"admin-changelog-entry-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"changelog entry {theme}{suffix}")
    assert problems == []
