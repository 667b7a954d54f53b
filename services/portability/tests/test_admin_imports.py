"""The admin area's import page (/admin/imports) without JavaScript, through the gateway: upload a
CSV with the form (multipart, with its token), see the import listed with what it brought and the
row it could not take; a forged form is refused and visitors off the team are sent to sign in.
Then in Chromium: the file chosen and sent with the form, axe and the width in both themes, at
1100, 390 and 320 px."""

from __future__ import annotations

import re

from testkit import create_workspace, wait_for

from services.web.tests.browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from services.web.tests.helpers import Visitor, form_csrf, sso_sign_in, team_member

NARROW = {"width": 320, "height": 640}
CSV = b"title,details,board,status\nDark mode,Please,Features,Planned\n,no title,Features,Open\n"


def finished(api, ws):
    def done():
        items = api.get(f"{ws.path}/imports", key=ws.key).json()["items"]
        return items if items and all(i["status"] in ("succeeded", "failed") for i in items) else None
    return wait_for(done, timeout=30, what="the imports to end")


def test_the_team_uploads_a_csv_and_sees_what_it_brought(stack, api, admin_token):
    ws = create_workspace(api, admin_token, name="Admin import")
    owner = team_member(stack.url, ws, "import-owner@example.com")
    base = f"/b/{ws.slug}/admin/imports"
    page = owner.get("/admin/imports")
    assert page.status_code == 200 and "<h1>Import</h1>" in page.text and "No import yet." in page.text
    assert f'href="{base}"' in page.text, "the navigation names the page"
    upload = {"file": ("board.csv", CSV, "text/csv")}
    assert owner.http.post(owner.url("/admin/imports"), data={"source": "csv"}, files=upload, timeout=30).status_code == 403, \
        "no form token"
    token = form_csrf(page.text, base)
    started = owner.http.post(owner.url("/admin/imports"), data={"csrf": token, "source": "csv"}, files=upload,
                              allow_redirects=False, timeout=30)
    assert started.status_code == 303 and started.headers["Location"] == base + "?done=started", started.text
    [job] = finished(api, ws)
    assert job["status"] == "succeeded" and job["filename"] == "board.csv" and job["counts"]["posts"] == 1
    listed = owner.get("/admin/imports")
    assert f'data-import="{job["id"]}" data-status="succeeded"' in listed.text and ">Done<" in listed.text
    assert "1 post," in listed.text and "1 item not imported" in listed.text and "row 3" in listed.text
    # A form without a file is said on the page.
    empty = owner.http.post(owner.url("/admin/imports"), data={"csrf": token, "source": "canny"},
                            files={"file": ("", b"", "application/octet-stream")}, timeout=30)
    assert empty.status_code == 400 and "Choose the kind of file and the file to import." in empty.text
    user = Visitor(stack.url, ws.slug)
    sso_sign_in(user, ws.user_token("import-reader"))
    for who in (Visitor(stack.url, ws.slug), user):
        r = who.get("/admin/imports", allow_redirects=False)
        assert r.status_code == 303 and "/sign-in?next=" in r.headers["Location"]


def test_the_import_page_in_a_browser(page, stack, api, admin_token, tmp_path):
    ws = create_workspace(api, admin_token, name="Browser import")
    sign_in_as_team(page, ws, "import-browser@example.com")
    page.goto(f"{stack.url}/b/{ws.slug}/admin/imports")
    (tmp_path / "board.csv").write_bytes(CSV)
    page.get_by_label("CSV, the columns of our own export").check()
    page.get_by_label("File", exact=True).set_input_files(str(tmp_path / "board.csv"))
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(r"done=started$"))
    finished(api, ws)
    problems = []
    for theme in ("light", "dark"):
        ws.settings(theme=theme)
        page.goto(f"{stack.url}/b/{ws.slug}/admin/imports")
        assert page.locator("html").get_attribute("data-theme") == theme
        page.get_by_text("1 item not imported").click()  # the errors, opened
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone"), (NARROW, "-320")):
            page.set_viewport_size(size)
            page.screenshot(path=str(screenshots() / f"admin-imports-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"imports {theme}{suffix}")
    assert problems == []


def test_the_team_moves_a_workspace_in_with_our_own_export(stack, api, admin_token):
    source = create_workspace(api, admin_token, name="Old home")
    source.board("features", "Features")
    assert api.post(f"{source.path}/posts", key=source.key, json={"boardSlug": "features", "title": "Moved idea",
                                                                   "content": "x"}).status_code == 201
    export = api.post(f"{source.path}/exports", key=source.key).json()
    wait_for(lambda: api.get(f"{source.path}/exports/{export['id']}", key=source.key).json()["status"] == "succeeded",
             timeout=60, what="the export")
    archive = api.get(f"{source.path}/exports/{export['id']}/download", key=source.key).content
    ws = create_workspace(api, admin_token, name="New home")
    owner = team_member(stack.url, ws, "mover@example.com")
    page = owner.get("/admin/imports")
    assert "Our own export" in page.text
    started = owner.http.post(owner.url("/admin/imports"), data={"csrf": form_csrf(page.text, f"/b/{ws.slug}/admin/imports"),
                                                                  "source": "ours"},
                              files={"file": ("old-home.zip", archive, "application/zip")}, allow_redirects=False, timeout=30)
    assert started.status_code == 303, started.text
    [job] = finished(api, ws)
    assert job["status"] == "succeeded" and job["source"] == "ours" and job["counts"]["posts"] == 1, job
    titles = [p["title"] for p in api.get(f"{ws.path}/posts", key=ws.key).json()["items"]]
    assert titles == ["Moved idea"]
