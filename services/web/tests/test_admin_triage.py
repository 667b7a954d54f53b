"""The admin area's triage settings page (/admin/triage): tags, custom fields and the score
formula with its preview, as a browser without JavaScript uses it and in Chromium (axe, a
390 px phone, light and dark theme)."""

from __future__ import annotations

import re
from html import unescape as html_unescape

import pytest
from testkit import assert_error, wait_for

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, create_post, csrf_of, team_member


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    return Visitor(stack.url, workspace.slug)


def settings_of(workspace) -> dict:
    r = workspace.api.get(f"{workspace.path}/triage", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()


def vote(workspace, post: dict, voters: int, prefix: str) -> None:
    for i in range(voters):
        r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/vote", user=workspace.user_token(f"{prefix}-{i}"))
        assert r.status_code in (200, 201), r.text


def score_order(workspace) -> list[str]:
    r = workspace.api.get(f"{workspace.path}/posts", key=workspace.key, params={"sort": "score"})
    assert r.status_code == 200, r.text
    return [p["id"] for p in r.json()["items"]]


def form_of(html: str, action: str) -> dict:
    """The hidden fields (csrf, version) of the form posting to ``action``."""
    match = re.search(rf'<form method="post" action="{re.escape(action)}"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)">'
                      r'<input type="hidden" name="version" value="(\d+)">', html)
    assert match, f"no form posting to {action}"
    return {"csrf": match.group(1), "version": match.group(2)}


def alert_in(html: str, section: str) -> str:
    match = re.search(rf'<p class="error" role="alert" id="{section}-error">([^<]*)</p>', html)
    assert match, f"no refusal beside the {section} form"
    return html_unescape(match.group(1))


def test_a_manager_edits_tags_fields_and_the_formula_without_javascript(site, workspace):
    often, big = create_post(workspace, "Often asked, small"), create_post(workspace, "Rarely asked, big")
    vote(workspace, often, 3, "often")
    vote(workspace, big, 2, "big")
    manager = team_member(site.base, workspace, "triage-manager@example.com", "manager")
    base = f"/b/{workspace.slug}/admin/triage"
    page = manager.get("/admin/triage")
    assert page.status_code == 200 and "<h1>Triage</h1>" in page.text and "No tags yet." in page.text
    assert f'href="{base}" aria-current="page"' in page.text  # its entry in the admin navigation

    # a tag: added (its slug made of its name), renamed and recoloured, then refused twice
    r = manager.post("/admin/triage/tags", {**form_of(page.text, base + "/tags"), "name": "Needs design", "color": "#DC2626"})
    assert r.status_code == 200 and "Tag added." in r.text and 'data-tag-slug="needs_design"' in r.text
    assert settings_of(workspace)["tags"] == [{"slug": "needs_design", "name": "Needs design", "color": "#dc2626"}]
    r = manager.post("/admin/triage/tags/needs_design", {**form_of(r.text, base + "/tags/needs_design"), "action": "save",
                                                         "name": "Design", "color": "#2563eb"})
    assert r.status_code == 200 and "Tag saved." in r.text and 'value="Design"' in r.text
    assert settings_of(workspace)["tags"] == [{"slug": "needs_design", "name": "Design", "color": "#2563eb"}]
    twice = manager.post("/admin/triage/tags", {**form_of(r.text, base + "/tags"), "name": "Again", "slug": "needs_design",
                                                "color": "#000000"})
    assert twice.status_code == 400 and "There is a tag “needs_design” already" in alert_in(twice.text, "tags")
    assert 'value="Again"' in twice.text  # what was typed is kept
    bad = manager.post("/admin/triage/tags", {**form_of(r.text, base + "/tags"), "name": "UX", "slug": "Not A Slug",
                                              "color": "#000000"})
    assert bad.status_code == 400 and "tags.1.slug" in alert_in(bad.text, "tags")  # the API's refusal

    # fields: a number with a range, a public select; a select without options is the API's 400
    page = manager.get("/admin/triage")
    r = manager.post("/admin/triage/fields", {**form_of(page.text, base + "/fields"), "name": "Impact", "type": "number",
                                              "min": "1", "max": "3"})
    assert r.status_code == 200 and "Field added." in r.text and "at least 1, at most 3" in r.text
    r = manager.post("/admin/triage/fields", {**form_of(r.text, base + "/fields"), "name": "Segment", "key": "segment",
                                              "type": "select", "options": "smb, enterprise\nsmb", "public": "on"})
    assert r.status_code == 200 and "smb, enterprise" in r.text
    fields = settings_of(workspace)["fields"]
    assert fields == [{"key": "impact", "name": "Impact", "type": "number", "public": False, "min": 1, "max": 3},
                      {"key": "segment", "name": "Segment", "type": "select", "public": True, "options": ["smb", "enterprise"]}]
    refused = manager.post("/admin/triage/fields", {**form_of(r.text, base + "/fields"), "name": "Platform", "type": "multiselect"})
    assert refused.status_code == 400 and "needs its options" in alert_in(refused.text, "fields")
    assert 'value="Platform"' in refused.text and '<option value="multiselect" selected>' in refused.text

    # a form shown before a colleague's save is refused rather than overwriting it
    stale = form_of(page.text, base + "/fields")
    r = manager.post("/admin/triage/fields", {**stale, "name": "Effort", "type": "number"})
    assert r.status_code == 409 and "changed meanwhile" in alert_in(r.text, "fields")
    assert [f["key"] for f in settings_of(workspace)["fields"]] == ["impact", "segment"]

    # the formula: previewed (nothing saved), refused beside the field, then saved
    r = workspace.api.patch(f"{workspace.path}/posts/{big['id']}", key=workspace.key, json={"fields": {"impact": 3}})
    assert r.status_code == 200, r.text
    page = manager.get("/admin/triage")
    formula = form_of(page.text, base + "/formula")
    shown = manager.post("/admin/triage/formula", {**formula, "scoreFormula": "votes * impact", "action": "preview"})
    assert shown.status_code == 200 and "(not saved)" in shown.text
    ranked = re.findall(r'<tr data-post-id="([0-9a-f]{24})">', shown.text)
    assert ranked == [big["id"], often["id"]]  # 2 x 3 = 6, then 3 x 1 (impact's minimum)
    row = shown.text.split(f'data-post-id="{big["id"]}"')[1].split("</tr>")[0]
    assert "Score now: </span>2<" in row and "<strong>6</strong>" in row
    assert 'value="votes * impact"' in shown.text and settings_of(workspace)["scoreFormula"] is None
    wrong = manager.post("/admin/triage/formula", {**formula, "scoreFormula": "votes / impact_x", "action": "preview"})
    assert wrong.status_code == 400 and "unknown name 'impact_x'" in alert_in(wrong.text, "formula")
    assert 'aria-invalid="true"' in wrong.text and 'aria-describedby="formula-hint formula-error"' in wrong.text
    zero = manager.post("/admin/triage/formula", {**formula, "scoreFormula": "votes / (impact - 1)", "action": "save"})
    assert zero.status_code == 400 and "can be 0" in alert_in(zero.text, "formula")
    saved = manager.post("/admin/triage/formula", {**formula, "scoreFormula": "votes * impact", "action": "save"})
    assert saved.status_code == 200 and "Score formula saved" in saved.text and 'value="votes * impact"' in saved.text
    assert settings_of(workspace)["scoreFormula"] == "votes * impact"
    wait_for(lambda: score_order(workspace) == [big["id"], often["id"]], timeout=30, what="the posts rescored")

    # removing: the field (the formula naming it is the API's 400), then the tag
    r = manager.post("/admin/triage/fields/impact/remove", form_of(saved.text, base + "/fields/impact/remove"))
    assert r.status_code == 400 and "unknown name 'impact'" in alert_in(r.text, "fields")
    r = manager.post("/admin/triage/fields/segment/remove", form_of(saved.text, base + "/fields/segment/remove"))
    assert r.status_code == 200 and "Field removed" in r.text and 'data-field-key="segment"' not in r.text
    r = manager.post("/admin/triage/tags/needs_design", {**form_of(r.text, base + "/tags/needs_design"), "action": "remove"})
    assert r.status_code == 200 and "Tag removed." in r.text and settings_of(workspace)["tags"] == []

    # nobody outside the team: sent to sign in, forms refused (no API call made)
    stranger = Visitor(site.base, workspace.slug)
    r = stranger.get("/admin/triage", allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"].startswith(f"/b/{workspace.slug}/sign-in?next=")
    refused = stranger.post("/admin/triage/tags", {"csrf": csrf_of(stranger.get().text), "version": "0", "name": "x", "color": "#000000"})
    assert refused.status_code == 403
    assert manager.post("/admin/triage/tags", {"version": "0", "name": "x", "color": "#000000"}).status_code == 403  # no CSRF


def test_the_preview_api_is_the_teams_and_ranks_without_saving(site, workspace):
    a, b = create_post(workspace, "First"), create_post(workspace, "Second")
    vote(workspace, b, 2, "pv")
    path = f"{workspace.path}/triage/preview"
    r = workspace.api.post(path, key=workspace.key, json={"scoreFormula": "votes * 2 + 1", "limit": 1})
    assert r.status_code == 200, r.text
    assert r.json() == {"scoreFormula": "votes * 2 + 1", "items": [
        {"id": b["id"], "title": "Second", "voteCount": 2, "revenue": 0, "score": 5, "currentScore": 2}]}
    whole = workspace.api.post(path, key=workspace.key, json={}).json()  # the saved formula: the vote count
    assert whole["scoreFormula"] is None and [p["id"] for p in whole["items"]] == [b["id"], a["id"]]
    assert workspace.api.post(path, key=workspace.key).json() == whole  # no body: the same
    assert len(workspace.api.post(path, key=workspace.key, json={"limit": 1.0}).json()["items"]) == 1
    assert "unknown name 'effort'" in assert_error(workspace.api.post(path, key=workspace.key, json={"scoreFormula": "effort"}), 400)
    assert_error(workspace.api.post(path, key=workspace.key, json={"limit": 51}), 400)
    assert_error(workspace.api.post(path, json={"scoreFormula": "votes"}), 401)
    assert_error(workspace.api.post(path, user=workspace.user_token("pv-reader"), json={"scoreFormula": "votes"}), 403)
    assert settings_of(workspace)["scoreFormula"] is None


def test_the_triage_page_in_a_browser_light_dark_and_on_a_phone(page, site, workspace):
    """In Chromium a manager adds a tag and previews then saves a formula: the API has the tag,
    and the team's list sorted by score follows the new formula. Then the page, with a preview
    shown, has no serious axe violation and fits a 390 px phone, in light and dark theme."""
    r = workspace.api.put(f"{workspace.path}/triage", key=workspace.key, json={
        "tags": [{"slug": "bug", "name": "Bug", "color": "#dc2626"}],
        "fields": [{"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3},
                   {"key": "platform", "name": "Platform", "type": "multiselect", "options": ["ios", "web"], "public": True}]})
    assert r.status_code == 200, r.text
    often, big = create_post(workspace, "Export to CSV"), create_post(workspace, "Single sign-on for the whole company")
    vote(workspace, often, 3, "b-often")
    vote(workspace, big, 2, "b-big")
    workspace.api.patch(f"{workspace.path}/posts/{big['id']}", key=workspace.key, json={"fields": {"impact": 3}})
    sign_in_as_team(page, workspace, "browser-triage@example.com", "manager")
    url = f"{site.base}/b/{workspace.slug}/admin/triage"
    page.goto(url)

    page.fill("#tag-name", "Needs design")
    page.fill("#tag-color", "#7c3aed")
    page.get_by_role("button", name="Add the tag").click()
    page.wait_for_load_state()
    assert page.locator("p.notice[role=status]").inner_text() == "Tag added."
    assert settings_of(workspace)["tags"][1] == {"slug": "needs_design", "name": "Needs design", "color": "#7c3aed"}

    # site.js shows the add-field inputs of the chosen type only
    assert page.is_visible("#field-min") and not page.is_visible("#field-options")
    page.select_option("#field-type", "select")
    assert page.is_visible("#field-options") and not page.is_visible("#field-min")
    page.fill("#field-name", "Segment")
    page.fill("#field-options", "smb\nenterprise")
    page.check("#field-public")
    page.get_by_role("button", name="Add the field").click()
    page.wait_for_load_state()
    assert page.locator("p.notice[role=status]").inner_text().startswith("Field added.")
    assert settings_of(workspace)["fields"][2] == {"key": "segment", "name": "Segment", "type": "select", "public": True,
                                                   "options": ["smb", "enterprise"]}

    assert score_order(workspace) == [often["id"], big["id"]]  # the vote count
    page.fill("#score-formula", "votes * impact")
    page.get_by_role("button", name="Preview").click()
    page.wait_for_load_state()
    rows = page.locator(".preview-table tbody tr")
    assert rows.count() == 2 and rows.first.get_attribute("data-post-id") == big["id"]
    assert settings_of(workspace)["scoreFormula"] is None
    page.get_by_role("button", name="Save the formula").click()
    page.wait_for_load_state()
    assert "Score formula saved" in page.locator("p.notice[role=status]").inner_text()
    wait_for(lambda: score_order(workspace) == [big["id"], often["id"]], timeout=30, what="the posts rescored")

    problems = []
    shots = screenshots()
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.goto(url)
            page.fill("#score-formula", "votes * impact + revenue / 1000")
            page.get_by_role("button", name="Preview").click()
            page.wait_for_load_state()
            assert page.locator("html").get_attribute("data-theme") == theme
            assert page.locator(".preview-table tbody tr").count() == 2
            page.screenshot(path=str(shots / f"admin-triage-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"triage {theme}{suffix}")
    # the refusal beside the formula, read as well
    page.fill("#score-formula", "votes / nothing")
    page.get_by_role("button", name="Preview").click()
    page.wait_for_load_state()
    assert page.locator("#formula-error").inner_text().startswith("field 'scoreFormula': unknown name 'nothing'")
    problems += page_problems(page, "triage refusal")
    assert problems == []
