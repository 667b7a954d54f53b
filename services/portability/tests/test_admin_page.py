"""The admin area's export page (/admin/exports) without JavaScript, through the gateway: start
an export with the form, see it listed, download the zip through the site with the session; an
end user or anonymous visitor is sent to sign in, a forged form is refused. Then in Chromium:
axe and the width in both themes, at 1100, 390 and 320 px."""

from __future__ import annotations

import io
import json
import re
import zipfile

from testkit import create_workspace, wait_for

from services.web.tests.browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from services.web.tests.helpers import Visitor, form_csrf, sso_sign_in, team_member

NARROW = {"width": 320, "height": 640}


def test_the_team_starts_lists_and_downloads_an_export(stack, api, admin_token):
    ws = create_workspace(api, admin_token, name="Admin export")
    ws.board("features", "Feature requests")
    owner = team_member(stack.url, ws, "export-owner@example.com")
    base = f"/b/{ws.slug}/admin/exports"
    page = owner.get("/admin/exports")
    assert page.status_code == 200 and "<h1>Export</h1>" in page.text and "No export yet." in page.text
    assert f'href="{base}"' in page.text, "the navigation names the page"
    assert owner.post("/admin/exports", {}).status_code == 403, "no form token"
    started = owner.post("/admin/exports", {"csrf": form_csrf(page.text, base)}, allow_redirects=False)
    assert started.status_code == 303 and started.headers["Location"] == base + "?done=started"
    [export] = api.get(f"{ws.path}/exports", key=ws.key).json()["items"]
    wait_for(lambda: api.get(f"{ws.path}/exports/{export['id']}", key=ws.key).json()["status"] == "succeeded",
             timeout=30, what="the export to succeed")
    listed = owner.get("/admin/exports")
    assert f'data-export="{export["id"]}" data-status="succeeded"' in listed.text and ">Ready<" in listed.text
    assert "0 posts" in listed.text and "1 board," in listed.text and "1 person," in listed.text
    link = f"/admin/exports/{export['id']}/download"
    assert f'href="{base}/{export["id"]}/download"' in listed.text
    got = owner.get(link)
    assert got.status_code == 200 and got.headers["Content-Type"] == "application/zip"
    assert got.headers["Content-Disposition"].startswith(f'attachment; filename="{ws.slug}-export-')
    archive = zipfile.ZipFile(io.BytesIO(got.content))
    people = [json.loads(line) for line in archive.read("people.jsonl").decode().splitlines()]
    assert [(p["email"], p["role"]) for p in people] == [("export-owner@example.com", "owner")]
    missing = owner.get("/admin/exports/000000000000000000000000/download")
    assert missing.status_code == 404 and "text/html" in missing.headers["Content-Type"]
    # Neither an end user nor an anonymous visitor gets the page or the file: both are sent to sign in.
    user = Visitor(stack.url, ws.slug)
    sso_sign_in(user, ws.user_token("export-reader"))
    for who in (Visitor(stack.url, ws.slug), user):
        for path in ("/admin/exports", link):
            r = who.get(path, allow_redirects=False)
            assert r.status_code == 303 and "/sign-in?next=" in r.headers["Location"], (path, r.status_code)


def test_the_export_page_in_a_browser(page, stack, api, admin_token):
    ws = create_workspace(api, admin_token, name="Browser export")
    ws.board("features", "Feature requests")
    sign_in_as_team(page, ws, "export-browser@example.com")
    page.goto(f"{stack.url}/b/{ws.slug}/admin/exports")
    page.get_by_role("button", name="Start an export").click()
    page.wait_for_url(re.compile(r"done=started$"))
    [export] = api.get(f"{ws.path}/exports", key=ws.key).json()["items"]
    wait_for(lambda: api.get(f"{ws.path}/exports/{export['id']}", key=ws.key).json()["status"] == "succeeded",
             timeout=30, what="the export to succeed")
    problems = []
    for theme in ("light", "dark"):
        ws.settings(theme=theme)
        page.goto(f"{stack.url}/b/{ws.slug}/admin/exports")
        assert page.locator("html").get_attribute("data-theme") == theme
        assert page.get_by_role("link", name=re.compile("^Download")).count() == 1
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone"), (NARROW, "-320")):
            page.set_viewport_size(size)
            page.screenshot(path=str(screenshots() / f"admin-exports-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"exports {theme}{suffix}")
    assert problems == []
