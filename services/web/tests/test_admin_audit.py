"""The audit log page (/admin/audit): the people service's log as a table (when, who, action,
target), filtered by action and paged with plain links; through the gateway without
JavaScript, then in Chromium (axe, 390 px, both themes)."""

from __future__ import annotations

import html
import re

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, csrf_of, sso_sign_in, team_member


def rows(page: str) -> list[dict]:
    found = re.findall(r'<tr data-type="([^"]+)">.*?<td class="actor"><span class="sr-only">By </span>([^<]*)</td>\s*'
                       r'<td class="action">([^<]*)</td>\s*<td class="target">([^<]*)', page, re.S)
    return [{"type": t, "who": html.unescape(w), "action": a, "target": html.unescape(g).strip()} for t, w, a, g in found]


def test_the_team_reads_filters_and_pages_the_audit_log(stack, workspace):
    owner = team_member(stack.url, workspace, "audit-owner@example.com")
    page = owner.get("/admin/audit")
    assert page.status_code == 200 and "<h1>Audit log</h1>" in page.text
    shown = rows(page.text)
    assert {"type": "invitation.accepted", "who": "audit-owner", "action": "Joined the team",
            "target": "audit-owner@example.com"} in shown
    assert any(r["type"] == "invitation.created" and r["who"] == "Operator" for r in shown)
    # a change made on the team page is the newest entry
    team = owner.get("/admin/team")
    owner.post("/admin/team", {"csrf": csrf_of(team.text), "email": "audited@example.com", "role": "manager"})
    newest = rows(owner.get("/admin/audit").text)[0]
    assert newest == {"type": "invitation.created", "who": "audit-owner", "action": "Invited",
                      "target": "audited@example.com"}
    # the filter: one action only, the choice kept in the form
    only = owner.get("/admin/audit?type=invitation.accepted")
    assert {r["type"] for r in rows(only.text)} == {"invitation.accepted"}
    assert '<option value="invitation.accepted" selected>' in only.text and "Show all" in only.text
    # a refusal of the API is shown beside the filter
    bad = owner.get("/admin/audit?type=nonsense")
    assert bad.status_code == 400 and 'id="audit-refused" class="error" role="alert"' in bad.text and "type" in bad.text
    # pages: 50 entries, then the rest behind "Older", with the filter kept in the links
    for n in range(50):
        r = workspace.api.post(f"{workspace.path}/members", key=workspace.admin_token,
                               json={"email": f"paged-{n}@example.com", "role": "manager"})
        assert r.status_code == 201, r.text
    first = owner.get("/admin/audit?type=invitation.created")
    assert [r["target"] for r in rows(first.text)] == [f"paged-{n}@example.com" for n in range(49, -1, -1)]
    older = re.search(r'<a href="([^"]+)" rel="next">', first.text)
    assert older and 'rel="prev"' not in first.text
    second = owner.http.get(stack.url + html.unescape(older.group(1)), timeout=30)
    assert second.status_code == 200 and "type=invitation.created" in second.url
    assert [r["target"] for r in rows(second.text)] == ["audited@example.com", "audit-owner@example.com"]
    assert 'rel="next"' not in second.text and re.search(r'<a href="[^"]*type=invitation.created" rel="prev">', second.text)
    # a manager reads it too; an end user and an anonymous visitor are sent to sign in
    manager = team_member(stack.url, workspace, "audit-manager@example.com", "manager")
    assert manager.get("/admin/audit").status_code == 200
    user = Visitor(stack.url, workspace.slug)
    sso_sign_in(user, workspace.user_token("audit-reader"))
    for visitor in (Visitor(stack.url, workspace.slug), user):
        r = visitor.get("/admin/audit", allow_redirects=False)
        assert r.status_code == 303 and "/sign-in?next=" in r.headers["Location"]


def test_the_audit_log_in_a_browser(page, stack, workspace):
    """Invite a colleague in Chromium, find it in the log by the action filter; axe and the
    width in both themes and sizes."""
    sign_in_as_team(page, workspace, "audit-browser@example.com")
    admin = f"{stack.url}/b/{workspace.slug}/admin"
    page.goto(admin + "/team")
    page.fill("#inv-email", "browser-invitee@example.com")
    page.get_by_role("button", name="Send the invitation").click()
    page.get_by_text("Invitation sent to").wait_for()
    page.goto(admin + "/audit")
    page.select_option("#audit-type", "invitation.created")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"type=invitation.created$"))
    first = page.locator("table.audit tbody tr").first
    assert first.get_attribute("data-type") == "invitation.created"
    assert "browser-invitee@example.com" in first.locator(".target").inner_text()
    assert page.locator('table.audit tbody tr:not([data-type="invitation.created"])').count() == 0
    problems = []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        page.goto(admin + "/audit")
        assert page.locator("html").get_attribute("data-theme") == theme
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.screenshot(path=str(screenshots() / f"admin-audit-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"audit {theme}{suffix}")
    assert problems == []
