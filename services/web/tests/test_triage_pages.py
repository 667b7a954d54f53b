"""Triage on the board site, as a browser without JavaScript sees it: tags, ETA and custom fields
on the post and board pages (the public part for everyone, the rest for the team), the
manager's triage form, the board sorted by score and filtered by tag, and the suggested
duplicates page."""

from __future__ import annotations

import re

import pytest
from testkit import wait_for

from .helpers import Visitor, create_post, csrf_of, form_csrf, sso_sign_in, team_member

TAGS = [{"slug": "bug", "name": "Bug", "color": "#dc2626"}, {"slug": "ux", "name": "<b>UX</b>", "color": "#facc15"}]
FIELDS = [
    {"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3},
    {"key": "platform", "name": "Platform", "type": "multiselect", "options": ["ios", "android", "web"], "public": True},
    {"key": "segment", "name": "Segment", "type": "select", "options": ["smb", "enterprise"]},
    {"key": "renewal", "name": "Renewal risk", "type": "checkbox"},
    {"key": "due", "name": "Due date", "type": "date"},
    {"key": "note", "name": "Team note", "type": "text"},
]
SHOWN = ",".join(f["key"] for f in FIELDS)


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True)
    return Visitor(stack.url, workspace.slug)


def save_triage(workspace, formula: str | None = "votes * impact") -> None:
    r = workspace.api.put(f"{workspace.path}/triage", key=workspace.key, json={"tags": TAGS, "fields": FIELDS, "scoreFormula": formula})
    assert r.status_code == 200, r.text


def member_id(workspace, email: str) -> str:
    """The user id (``person:<id>``) of the team member with ``email``."""
    members = workspace.api.get(f"{workspace.path}/members", key=workspace.key).json()["items"]
    return "person:" + next(m["id"] for m in members if m["email"] == email)


def patch(workspace, post_id: str, **changes) -> dict:
    r = workspace.api.patch(f"{workspace.path}/posts/{post_id}", key=workspace.key, json=changes)
    assert r.status_code == 200, r.text
    return r.json()


def api_post(workspace, post_id: str) -> dict:
    return workspace.api.get(f"{workspace.path}/posts/{post_id}", key=workspace.key).json()


def test_a_visitor_sees_tags_eta_and_public_fields_and_nothing_of_the_teams(site, workspace):
    save_triage(workspace)
    manager = team_member(site.base, workspace, "facts-owner@example.com")
    owner = member_id(workspace, "facts-owner@example.com")
    post = create_post(workspace, "Offline mode")
    plain = create_post(workspace, "Nothing triaged here")
    patch(workspace, post["id"], owner=owner, eta="2027-03", tags=["ux", "bug"],
          fields={"impact": 3, "platform": ["ios", "web"], "note": "Big customer asked on a call"})

    page = site.get(f"/p/{post['id']}").text
    assert re.search(r'<span class="tag tag-ux" data-tag="ux">&lt;b&gt;UX&lt;/b&gt;</span>\s*'
                     r'<span class="tag tag-bug" data-tag="bug">Bug</span>', page)
    assert "ETA: March 2027" in page
    assert "<dt>Platform</dt>" in page and '<dd data-field="platform">ios, web</dd>' in page
    for secret in ("Impact", "Big customer asked on a call", "Team note", "data-owner", "data-score", "Score", "Internal",
                   "facts-owner", 'value="fields"'):
        assert secret not in page, secret
    board = site.get().text
    row = board.split(f'data-post-id="{post["id"]}"')[1].split("</li>")[0]
    assert 'data-tag="ux"' in row and 'data-tag="bug"' in row and "ETA: March 2027" in row and "Score" not in row
    plain_row = board.split(f'data-post-id="{plain["id"]}"')[1].split("</li>")[0]
    assert "data-tag" not in plain_row and "ETA" not in plain_row
    # The public board is as it was: no score order, no tag filter; asking for them shows the default.
    assert 'data-sort="score"' not in board and 'id="f-tag"' not in board
    assert site.get("?sort=score").status_code == 200 and 'data-sort="top" aria-current="page"' in site.get("?sort=score").text
    assert site.get("?tag=ux").text.count("data-post-id=") == 2
    # The tags' colours are a stylesheet of the site (the CSP allows no style attribute).
    css = site.get("/theme.css").text
    assert ".tag-bug { background: #dc2626; border-color: #dc2626; color: #ffffff; }" in css
    assert ".tag-ux { background: #facc15; border-color: #facc15; color: #000000; }" in css
    assert 'style="' not in page and 'style="' not in board

    # The team sees the owner, the score and the internal fields, marked as internal.
    seen = manager.get(f"/p/{post['id']}").text
    assert f'<dd data-owner="{owner}">facts-owner</dd>' in seen and 'data-score="0' in seen
    assert re.search(r'<dt>Impact <span class="badge internal">Internal</span></dt>\s*<dd data-field="impact">3</dd>', seen)
    assert "Big customer asked on a call" in seen and "<dt>Platform</dt>" in seen
    team_board = manager.get().text
    assert 'id="f-tag"' in team_board and 'data-sort="score">Score</a>' in team_board and "Score 0" in team_board


def test_a_manager_sets_and_clears_triage_through_the_form(site, workspace):
    save_triage(workspace)
    manager = team_member(site.base, workspace, "form-owner@example.com")
    team_member(site.base, workspace, "form-colleague@example.com", "manager")
    colleague_id = member_id(workspace, "form-colleague@example.com")
    post = create_post(workspace, "Export to CSV")
    page = manager.get(f"/p/{post['id']}").text
    action = f"/b/{workspace.slug}/p/{post['id']}/triage"
    assert f'<input type="hidden" name="fieldKeys" value="{SHOWN}">' in page
    assert f'<option value="{colleague_id}">' in page
    assert 'type="month" name="eta"' in page and 'name="tag.bug"' in page and 'name="field.platform.2" value="web"' in page
    assert 'type="number" name="field.impact" step="any" min="1" max="3"' in page and 'type="date" name="field.due"' in page
    assert "Impact (internal)" in page and ">Platform<" in page
    token = form_csrf(page, action)
    form = {"csrf": token, "action": "fields", "ownerWas": "", "fieldKeys": SHOWN, "owner": colleague_id, "eta": "2027-11",
            "tag.bug": "1", "field.impact": "2", "field.platform.0": "ios", "field.platform.2": "web",
            "field.segment": "enterprise", "field.renewal": "true", "field.due": "2027-10-01", "field.note": "Call <Ann>"}
    r = manager.post(f"/p/{post['id']}/triage", form, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}/p/{post['id']}"
    stored = api_post(workspace, post["id"])
    assert stored["owner"]["id"] == colleague_id and stored["eta"] == "2027-11" and [t["slug"] for t in stored["tags"]] == ["bug"]
    assert stored["fields"] == {"impact": 2, "platform": ["ios", "web"], "segment": "enterprise", "renewal": True,
                                "due": "2027-10-01", "note": "Call <Ann>"}
    page = manager.get(f"/p/{post['id']}").text
    assert "ETA: November 2027" in page and "Call &lt;Ann&gt;" in page and "Call <Ann>" not in page
    assert f'<option value="{colleague_id}" selected>' in page and 'name="tag.bug" value="1" checked' in page
    assert 'value="2027-11"' in page and 'name="field.impact" step="any" min="1" max="3" value="2"' in page
    assert 'value="enterprise" selected' in page and 'name="field.renewal" value="true" checked' in page

    # An out-of-range value is the API's refusal, shown as the error page with its message.
    refused = manager.post(f"/p/{post['id']}/triage", {**form, "ownerWas": colleague_id, "field.impact": "9"})
    assert refused.status_code == 400 and "fields.impact" in refused.text and refused.headers["Content-Type"].startswith("text/html")
    assert api_post(workspace, post["id"])["fields"]["impact"] == 2

    # Everything emptied: no owner, no ETA, no tags, the values cleared, the checkbox off.
    r = manager.post(f"/p/{post['id']}/triage", {"csrf": token, "action": "fields", "ownerWas": colleague_id, "owner": "",
                                                  "fieldKeys": SHOWN, "eta": "", "field.impact": "", "field.segment": "",
                                                  "field.due": "", "field.note": ""})
    assert r.status_code == 200, r.text
    stored = api_post(workspace, post["id"])
    assert stored["owner"] is None and stored["eta"] is None and stored["tags"] == [] and stored["fields"] == {"renewal": False}
    # Anyone else is refused before any change, even with a form token of their own.
    anon = Visitor(site.base, workspace.slug)
    assert anon.post(f"/p/{post['id']}/triage", {**form, "csrf": anon.csrf()}).status_code == 403
    assert api_post(workspace, post["id"])["owner"] is None


def test_managers_sort_the_board_by_score_and_filter_it_by_tag(site, workspace):
    save_triage(workspace)
    manager = team_member(site.base, workspace, "score-owner@example.com")
    low, high = create_post(workspace, "Low impact idea"), create_post(workspace, "High impact idea")
    for i, post in enumerate((low, low, high)):
        r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/vote", user=workspace.user_token(f"voter-{i}"))
        assert r.status_code in (200, 201), r.text
    patch(workspace, low["id"], fields={"impact": 1}, tags=["bug"])  # 2 votes x 1
    patch(workspace, high["id"], fields={"impact": 3}, tags=["ux"])  # 1 vote x 3
    top = manager.get().text
    assert top.index("Low impact idea") < top.index("High impact idea")
    scored = manager.get("?sort=score").text
    assert scored.index("High impact idea") < scored.index("Low impact idea")
    assert 'data-sort="score" aria-current="page">Score</a>' in scored and "Score 3" in scored and "Score 2" in scored
    tagged = manager.get("?sort=score&tag=bug").text
    assert "Low impact idea" in tagged and "High impact idea" not in tagged
    assert '<option value="bug" selected>Bug</option>' in tagged
    assert manager.get("?tag=no_such_tag").text.count("data-post-id=") == 2  # an unknown tag filters nothing


def open_suggestions(workspace) -> list[dict]:
    return workspace.api.get(f"{workspace.path}/suggestions", key=workspace.key).json()["items"]


def test_the_duplicates_page_lists_accepts_and_dismisses(site, workspace):
    manager = team_member(site.base, workspace, "dupes-owner@example.com")
    titles = {}
    for title, content in (("Export reports to CSV files", "We need CSV export of the reports"),
                           ("Export reports as CSV", "CSV export for reports please")):
        titles[create_post(workspace, title, content)["id"]] = title
    first = wait_for(lambda: open_suggestions(workspace), timeout=60, what="a suggestion for the duplicate")[0]
    # Which of the two is merged into the other is the posts service's to say.
    merged, into = first["post"]["id"], first["into"]["id"]
    assert {merged, into} == set(titles)
    page = manager.get("/admin/duplicates")
    assert page.status_code == 200 and f'href="/b/{workspace.slug}/admin/duplicates" aria-current="page">Duplicates<' in page.text
    item = page.text.split(f'data-suggestion-id="{first["id"]}"')[1].split("</li>")[0]
    assert re.search(rf'href="/b/{workspace.slug}/p/{merged}">{titles[merged]}</a>.*may be a duplicate of\s*'
                     rf'<a href="/b/{workspace.slug}/p/{into}">{titles[into]}</a>', item, re.S), item
    assert f'{round(first["similarity"] * 100)}% similar' in item
    assert f"Merge<span class=\"sr-only\"> {titles[merged]} into {titles[into]}</span>" in item
    decide = f"/b/{workspace.slug}/admin/duplicates/{first['id']}"
    token = form_csrf(page.text, decide)
    assert manager.post(f"/admin/duplicates/{first['id']}", {"action": "accept"}).status_code == 403  # no form token
    r = manager.post(f"/admin/duplicates/{first['id']}", {"csrf": token, "action": "accept"}, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}/admin/duplicates?done=accept"
    assert api_post(workspace, merged)["mergedInto"]["id"] == into
    after = manager.get("/admin/duplicates?done=accept").text
    assert "Merged." in after and first["id"] not in after
    # Deciding it again: the page again, with the API's reason.
    again = manager.post(f"/admin/duplicates/{first['id']}", {"csrf": token, "action": "dismiss"})
    assert again.status_code == 409 and "already" in again.text and "Suggested duplicates" in again.text

    another = create_post(workspace, "CSV export of reports", "Reports exported to CSV")
    second = wait_for(lambda: [s for s in open_suggestions(workspace) if another["id"] in (s["post"]["id"], s["into"]["id"])],
                      timeout=60, what="a suggestion for the second duplicate")[0]
    r = manager.post(f"/admin/duplicates/{second['id']}", {"csrf": token, "action": "dismiss"})
    assert r.status_code == 200 and "Dismissed" in r.text and second["id"] not in r.text
    dismissed = workspace.api.get(f"{workspace.path}/suggestions", params={"state": "dismissed"}, key=workspace.key).json()["items"]
    assert [s["id"] for s in dismissed] == [second["id"]]
    assert api_post(workspace, another["id"])["mergedInto"] is None


def test_only_the_team_opens_or_decides_the_duplicates(site, workspace):
    """A visitor, and a signed-in person who is not on the team, are sent to sign in (with the
    way back) and refused a decision even with their own form token."""
    create_post(workspace, "A post, for a page with a form")
    user = Visitor(site.base, workspace.slug)
    sso_sign_in(user, workspace.user_token("not-team"))
    for visitor in (site, user):
        r = visitor.get("/admin/duplicates", allow_redirects=False)
        assert r.status_code == 303
        assert r.headers["Location"] == f"/b/{workspace.slug}/sign-in?next=%2Fb%2F{workspace.slug}%2Fadmin%2Fduplicates"
        page = visitor.get().text
        assert "/admin/duplicates" not in page
        r = visitor.post(f"/admin/duplicates/{'a' * 24}", {"csrf": csrf_of(page), "action": "dismiss"})
        assert r.status_code == 403 and r.headers["Content-Type"].startswith("text/html")
