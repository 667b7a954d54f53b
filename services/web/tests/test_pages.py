"""The board site through the gateway, as a browser without JavaScript sees it."""

from __future__ import annotations

import re

import pytest

from .helpers import Visitor, create_post, csrf_of, scripts_of, vote_count


@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True)
    return Visitor(stack.url, workspace.slug)


def test_board_lists_posts_with_filters_and_security_headers(site, workspace):
    a = create_post(workspace, "Dark mode please", "It would be **nice**")
    b = create_post(workspace, "Export to CSV")
    r = site.get()
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    assert "Dark mode please" in r.text and "Export to CSV" in r.text
    assert a["id"] in r.text and b["id"] in r.text
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff" and r.headers["Referrer-Policy"]
    searched = site.get("?q=csv")
    assert "Export to CSV" in searched.text and "Dark mode please" not in searched.text
    newest = site.get("?sort=new")
    assert newest.text.index("Export to CSV") < newest.text.index("Dark mode please")
    assert site.get("?board=nope").text.count("data-post-id") == 0


def test_paging_links(site, workspace):
    for i in range(22):
        create_post(workspace, f"Idea number {i}")
    first = site.get("?sort=new")
    assert first.text.count("data-post-id=") == 20
    nxt = re.search(r'href="([^"]+)" rel="next"', first.text).group(1).replace("&amp;", "&")
    second = site.http.get(site.base + nxt, timeout=30)
    assert second.text.count("data-post-id=") == 2 and 'rel="prev"' in second.text


def test_vote_by_form_survives_a_reload_and_needs_csrf(site, workspace):
    post = create_post(workspace, "Vote for me")
    page = site.get()
    assert vote_count(page.text, post["id"]) == 0
    refused = site.post(f"/p/{post['id']}/vote", {"action": "vote", "next": f"/b/{workspace.slug}"})
    assert refused.status_code == 403
    forged = site.post(f"/p/{post['id']}/vote", {"csrf": "0" * 32, "action": "vote"})
    assert forged.status_code == 403
    r = site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(page.text), "action": "vote", "next": f"/b/{workspace.slug}"}, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}"
    assert vote_count(site.get().text, post["id"]) == 1
    assert vote_count(site.get().text, post["id"]) == 1  # and again: it is stored
    assert workspace.api.get(f"{workspace.path}/posts/{post['id']}").json()["voteCount"] == 1
    # another visitor (another anonymous cookie) adds a vote; an offsite "next" is ignored
    other = Visitor(site.base, workspace.slug)
    r = other.post(f"/p/{post['id']}/vote", {"csrf": other.csrf(), "action": "vote", "next": "https://evil.example/"}, allow_redirects=False)
    assert r.headers["Location"] == f"/b/{workspace.slug}/p/{post['id']}"
    assert vote_count(site.get().text, post["id"]) == 2


def test_anonymous_cookie_is_signed_and_httponly(site):
    r = site.get()
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith("fb_anon=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    value = site.http.cookies["fb_anon"]
    anon_id, _, signature = value.partition(".")
    assert re.fullmatch(r"[0-9a-f]{32}", anon_id) and signature
    site.http.cookies.set("fb_anon", anon_id + ".forged", domain=site.http.cookies.list_domains()[0] if site.http.cookies.list_domains() else "")
    again = site.get()
    assert "fb_anon=" in again.headers.get("Set-Cookie", "")  # a forged cookie is replaced


def test_script_in_content_is_inert(site, workspace):
    post = create_post(workspace, "<script>alert('t')</script>Title",
                       "Hi <script>alert(1)</script>\n\n[click](javascript:alert(2)) <img src=x onerror=alert(3)>\n\n**bold** [ok](https://example.com)")
    for html in (site.get().text, site.get(f"/p/{post['id']}").text):
        found = scripts_of(html)
        assert all(s["attrs"].get("src", "").endswith("/static/site.js") and not s["body"].strip() for s in found.scripts), found.scripts
        assert not found.handlers
        assert "&lt;script&gt;" in html
    page = site.get(f"/p/{post['id']}").text
    assert "<strong>bold</strong>" in page and 'href="https://example.com"' in page
    assert not re.search(r"href=[\"']?\s*javascript:", page, re.I)


def test_post_page_threads_comments_and_hides_private_ones(site, workspace):
    post = create_post(workspace, "Threads")
    api, path = workspace.api, f"{workspace.path}/posts/{post['id']}/comments"
    top = api.post(path, key=workspace.key, json={"content": "From the team"}).json()
    reply = api.post(path, user=workspace.user_token("u1"), json={"content": "A reply", "parentId": top["id"]}).json()
    api.post(path, key=workspace.key, json={"content": "Secret note", "isPrivate": True})
    page = site.get(f"/p/{post['id']}").text
    assert "From the team" in page and "A reply" in page and "Secret note" not in page
    assert f'id="c-{reply["id"]}" class="comment depth-1' in page
    assert page.index("From the team") < page.index("A reply")
    assert "badge team" in page
    # a comment and a reply through the page's forms
    r = site.post(f"/p/{post['id']}/comments", {"csrf": csrf_of(page), "content": "Mine", "parentId": reply["id"]}, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"].startswith(f"/b/{workspace.slug}/p/{post['id']}#c-")
    page = site.get(f"/p/{post['id']}").text
    assert page.index("A reply") < page.index("Mine") and "comment depth-2" in page


def test_sso_sign_in_sets_session_cookie_and_lets_the_user_vote(site, workspace):
    workspace.settings(anonVote=False)
    post = create_post(workspace, "Needs a real user")
    page = site.get()
    refused = site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(page.text), "action": "vote"})
    assert refused.status_code == 401 and "Sign in to vote" in refused.text and "/sso?token=" in refused.text
    assert site.get("/sso?token=not-a-jwt", allow_redirects=False).status_code == 401
    r = site.get("/sso?token=" + workspace.user_token("sso-1"), allow_redirects=False)
    assert r.status_code == 303, r.text
    cookie = [c for c in r.raw.headers.getlist("Set-Cookie") if c.startswith("fb_session=")][0]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    first_sid = site.http.cookies["fb_session"]
    page = site.get()
    assert "Sign out" in page.text
    r = site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(page.text), "action": "vote", "next": f"/b/{workspace.slug}"})
    assert r.status_code == 200 and vote_count(r.text, post["id"]) == 1
    # signing in again rotates the session id; the old one is gone
    site.get("/sso?token=" + workspace.user_token("sso-1"), allow_redirects=False)
    assert site.http.cookies["fb_session"] != first_sid
    # https through a proxy: the cookie is Secure
    r = site.http.get(site.url("/sso?token=" + workspace.user_token("sso-2")), headers={"X-Forwarded-Proto": "https"}, allow_redirects=False, timeout=30)
    assert "Secure" in [c for c in r.raw.headers.getlist("Set-Cookie") if c.startswith("fb_session=")][0]
    # sign out needs the form's token
    page = site.get()
    assert site.post("/sign-out", {}).status_code == 403
    site.post("/sign-out", {"csrf": csrf_of(page.text)})
    assert "Team sign-in" in site.get().text


def test_manager_signs_in_and_triages(site, workspace):
    a = create_post(workspace, "Keyboard shortcuts")
    b = create_post(workspace, "Shortcuts on the keyboard")
    page = site.get("/admin/sign-in")
    bad = site.post("/admin/sign-in", {"csrf": csrf_of(page.text), "apiKey": "nope"})
    assert bad.status_code == 400 and "not a manager key" in bad.text
    r = site.post("/admin/sign-in", {"csrf": csrf_of(page.text), "apiKey": workspace.key})
    assert r.status_code == 200 and "Moderation queue" in r.text
    assert workspace.key not in r.text
    post_page = site.get(f"/p/{a['id']}").text
    assert workspace.key not in post_page and "Change status" in post_page
    token = csrf_of(post_page)
    r = site.post(f"/p/{a['id']}/triage", {"csrf": token, "action": "status", "statusSlug": "planned"})
    assert r.status_code == 200, r.text
    assert workspace.api.get(f"{workspace.path}/posts/{a['id']}").json()["status"]["slug"] == "planned"
    found = site.get(f"/p/{a['id']}?merge_q=keyboard+shortcuts").text
    assert f'name="intoPostId" value="{b["id"]}"' in found
    r = site.post(f"/p/{a['id']}/triage", {"csrf": token, "action": "merge", "intoPostId": b["id"]})
    assert "Merged into" in r.text
    assert "Merged here" in site.get(f"/p/{b['id']}").text
    r = site.post(f"/p/{a['id']}/triage", {"csrf": token, "action": "unmerge"})
    assert "Merged into" not in r.text
    r = site.post(f"/p/{a['id']}/comments", {"csrf": token, "content": "Team only", "isPrivate": "1"})
    assert "Team only" in r.text and "Private" in r.text
    assert "Team only" not in Visitor(site.base, workspace.slug).get(f"/p/{a['id']}").text
    # a non-manager cannot triage, even with a valid token
    anon = Visitor(site.base, workspace.slug)
    assert anon.post(f"/p/{a['id']}/triage", {"csrf": anon.csrf(), "action": "status", "statusSlug": "open"}).status_code == 403


def test_roadmap_changelog_branding_and_static(site, workspace):
    post = create_post(workspace, "On the roadmap")
    workspace.api.patch(f"{workspace.path}/posts/{post['id']}", key=workspace.key, json={"statusSlug": "planned"})
    roadmap = site.get("/roadmap").text
    assert "On the roadmap" in roadmap
    r = workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key,
                           json={"title": "Release 1", "slug": "r1", "content": "Shipped", "postIds": [post["id"]], "publish": True})
    assert r.status_code == 201, r.text
    workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key, json={"title": "Draft one", "slug": "d1", "content": "x"})
    changelog = site.get("/changelog").text
    assert "Release 1" in changelog and "Draft one" not in changelog
    assert f'href="/b/{workspace.slug}/p/{post["id"]}">On the roadmap<' in changelog
    workspace.settings(primaryColor="#ff0000", theme="dark", hidePoweredBy=True)
    css = site.get("/theme.css")
    assert css.headers["Content-Type"].startswith("text/css") and "--primary: #ff0000" in css.text
    board = site.get().text
    assert 'data-theme="dark"' in board and "Powered by" not in board
    assert site.get("/static/site.js").headers["Content-Type"].startswith("text/javascript")
    assert site.get("/static/nope.js").status_code == 404


def test_submit_page(site, workspace):
    workspace.settings(anonSubmit=True)
    page = site.get("/new")
    assert 'data-search-url="/v1/workspaces/' in page.text
    r = site.post("/new", {"csrf": csrf_of(page.text), "board": "features", "title": "Submitted here", "content": "via form"})
    assert r.status_code == 200 and "Submitted here" in r.text and "via form" in r.text


def test_unknown_workspace_is_an_html_404(stack):
    r = Visitor(stack.url, "no-such-workspace-here").get()
    assert r.status_code == 404 and r.headers["Content-Type"].startswith("text/html")
