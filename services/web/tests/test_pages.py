"""The board site through the gateway, as a browser without JavaScript sees it."""

from __future__ import annotations

import re

import pytest
from web.contract import SECURITY_HEADERS

from .helpers import Visitor, create_post, csrf_of, form_csrf, invite, join_team, scripts_of, sso_sign_in, team_member, vote_count


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


def session_cookies(r) -> list[str]:
    return [c for c in r.raw.headers.getlist("Set-Cookie") if c.startswith("fb_session=")]


def test_sso_sign_in_sets_session_cookie_and_lets_the_user_vote(site, workspace):
    workspace.settings(anonVote=False)
    post = create_post(workspace, "Needs a real user")
    page = site.get()
    refused = site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(page.text), "action": "vote"})
    assert refused.status_code == 401 and "Sign in to vote" in refused.text and "/sso?token=" not in refused.text  # no internal path
    assert f'href="/b/{workspace.slug}/sign-in?next=%2Fb%2F{workspace.slug}%2Fp%2F{post["id"]}"' in refused.text
    assert site.get("/sso?token=not-a-jwt", allow_redirects=False).status_code == 401
    assert site.get("/sso", allow_redirects=False).status_code == 400
    confirm, r = sso_sign_in(site, workspace.user_token("sso-1"))
    assert "Continue as User sso-1" in confirm.text and not session_cookies(confirm)
    assert r.status_code == 303, r.text
    cookie = session_cookies(r)[0]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    first_sid = site.http.cookies["fb_session"]
    page = site.get()
    assert "Sign out" in page.text and "Signed in as User sso-1" in page.text
    r = site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(page.text), "action": "vote", "next": f"/b/{workspace.slug}"})
    assert r.status_code == 200 and vote_count(r.text, post["id"]) == 1
    # signing in again rotates the session id; the old one is gone
    sso_sign_in(site, workspace.user_token("sso-1"))
    assert site.http.cookies["fb_session"] != first_sid
    # https through a proxy: the cookie is Secure
    _, r = sso_sign_in(site, workspace.user_token("sso-2"), headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in session_cookies(r)[0]
    # sign out needs the form's token
    page = site.get()
    assert site.post("/sign-out", {}).status_code == 403
    site.post("/sign-out", {"csrf": csrf_of(page.text)})
    assert 'href="/b/%s/sign-in">Sign in<' % workspace.slug in site.get().text


def test_a_sign_in_link_opened_by_get_signs_nobody_in(site, workspace):
    """Login CSRF: a sign-in link (or an image of one in a comment) only asks; the page's form,
    with the visitor's own CSRF token, signs in."""
    sso = f"/b/{workspace.slug}/sso"
    attacker = workspace.user_token("attacker")
    # An anonymous visitor sees whom the link is for, and no session starts.
    anon = Visitor(site.base, workspace.slug)
    page = anon.get("/sso?token=" + attacker, allow_redirects=False)
    assert page.status_code == 200 and "Continue as User attacker" in page.text
    assert not session_cookies(page) and "fb_session" not in anon.http.cookies
    assert not [s for s in scripts_of(page.text).scripts if s["body"].strip()]  # nothing submits the form by itself
    # A signed-in user and a signed-in manager keep their sessions, and are told what continuing does.
    user = Visitor(site.base, workspace.slug)
    sso_sign_in(user, workspace.user_token("victim"))
    manager = team_member(site.base, workspace, "victim-owner@example.com")
    for visitor, who in ((user, "User victim"), (manager, "victim-owner")):
        sid = visitor.http.cookies["fb_session"]
        page = visitor.get("/sso?token=" + attacker, allow_redirects=False)
        assert page.status_code == 200 and not session_cookies(page)
        assert f"You are signed in as <strong>{who}</strong>" in page.text and "Continuing signs you out" in page.text
        # a POST without the page's token, or with another visitor's, changes nothing
        for form in ({"token": attacker}, {"token": attacker, "csrf": "0" * 32},
                     {"token": attacker, "csrf": form_csrf(anon.get("/sso?token=" + attacker).text, sso)}):
            refused = visitor.post("/sso", form, allow_redirects=False)
            assert refused.status_code == 403 and not session_cookies(refused)
        assert visitor.http.cookies["fb_session"] == sid
    assert "Signed in as User victim" in user.get().text
    assert manager.get("/admin/queue", allow_redirects=False).status_code == 200
    # The attack as it was: an image of the link in a comment a manager reads.
    post = create_post(workspace, "Looks harmless")
    workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", user=workspace.user_token("attacker"),
                       json={"content": f"![]({sso}?token={attacker}) ![](//{workspace.slug}.example/x.png)"})
    viewed = manager.get(f"/p/{post['id']}")
    assert viewed.status_code == 200 and "sso?token=" not in viewed.text and "x.png" not in viewed.text
    assert manager.get("/admin/queue", allow_redirects=False).status_code == 200
    # Pressing "Continue" on the page signs in, as the link said.
    page = anon.get("/sso?token=" + attacker)
    r = anon.post("/sso", {"token": attacker, "csrf": form_csrf(page.text, sso)}, allow_redirects=False)
    assert r.status_code == 303 and session_cookies(r) and "Signed in as User attacker" in anon.get().text


def test_the_session_is_the_people_services_and_ends_there(stack, site, workspace):
    """The cookie holds the people service's session token (the site keeps no session of its
    own): sign-out ends it for the API too, and a member removed from the team is anonymous on
    their next page, the cookie cleared."""
    manager = team_member(site.base, workspace, "sessions-owner@example.com")
    token = manager.http.cookies["fb_session"]
    assert token.startswith("fbs_")
    me = workspace.api.get("/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["role"] == "owner", me.text
    manager.post("/sign-out", {"csrf": csrf_of(manager.get().text)})
    assert "fb_session" not in manager.http.cookies
    assert workspace.api.get("/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    # a removed member
    colleague = team_member(site.base, workspace, "removed-manager@example.com", "manager")
    assert f'href="/b/{workspace.slug}/admin">Admin<' in colleague.get().text
    members = workspace.api.get(f"{workspace.path}/members", key=workspace.key).json()["items"]
    gone = next(m for m in members if m["email"] == "removed-manager@example.com")
    assert workspace.api.delete(f"{workspace.path}/members/{gone['id']}", key=workspace.key).status_code == 204
    page = colleague.get()
    assert page.status_code == 200 and f'href="/b/{workspace.slug}/admin"' not in page.text and ">Sign in<" in page.text
    assert "fb_session" not in colleague.http.cookies
    assert colleague.get("/admin/queue", allow_redirects=False).headers["Location"].startswith(f"/b/{workspace.slug}/sign-in?next=")


def test_the_api_key_form_is_gone(site, workspace):
    r = site.get("/admin/sign-in", allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}/sign-in?next=%2Fb%2F{workspace.slug}%2Fadmin%2Fqueue"
    assert site.post("/admin/sign-in", {"apiKey": workspace.key}).status_code == 405


def test_manager_signs_in_and_triages(site, workspace):
    a = create_post(workspace, "Keyboard shortcuts")
    b = create_post(workspace, "Shortcuts on the keyboard")
    r = join_team(site, invite(workspace, "triage-owner@example.com"))
    assert r.status_code == 200 and f'href="/b/{workspace.slug}/admin">Admin<' in r.text
    post_page = site.get(f"/p/{a['id']}").text
    assert workspace.key not in post_page and "Save triage" in post_page
    token = csrf_of(post_page)
    r = site.post(f"/p/{a['id']}/triage", {"csrf": token, "action": "status", "statusSlug": "planned"})
    assert r.status_code == 200, r.text
    assert workspace.api.get(f"{workspace.path}/posts/{a['id']}").json()["status"]["slug"] == "planned"
    found = site.get(f"/p/{a['id']}?merge_q=keyboard+shortcuts").text
    assert f'name="intoPostId" value="{b["id"]}"' in found
    r = site.post(f"/p/{a['id']}/triage", {"csrf": token, "action": "merge", "intoPostId": b["id"]})
    assert "Merged into" in r.text
    # a merged post takes no vote: no vote form, a link to the post it went into; a vote sent
    # anyway (a page loaded before the merge) lands back on its page
    assert f'action="/b/{workspace.slug}/p/{a["id"]}/vote"' not in r.text and f'href="/b/{workspace.slug}/p/{b["id"]}"' in r.text
    voted = site.post(f"/p/{a['id']}/vote", {"csrf": token, "action": "vote"}, allow_redirects=False)
    assert voted.status_code == 303 and voted.headers["Location"] == f"/b/{workspace.slug}/p/{a['id']}"
    assert "Merged here" in site.get(f"/p/{b['id']}").text
    r = site.post(f"/p/{a['id']}/triage", {"csrf": token, "action": "unmerge"})
    assert "Merged into" not in r.text
    r = site.post(f"/p/{a['id']}/comments", {"csrf": token, "content": "Team only", "isPrivate": "1"})
    assert "Team only" in r.text and "Private" in r.text
    # a team reply names its member beside the badge
    assert re.search(r'<span class="author">triage-owner</span> <span class="badge team">Team</span>', r.text)
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


def test_every_kind_of_answer_carries_the_security_headers(stack, site, workspace):
    """A page, a redirect, the error pages (the site's own refusal and the API's), a file, the
    theme and a file that is not there: each carries every security header."""
    post = create_post(workspace, "Headers everywhere")
    page = site.get()
    answers = {
        "page": page,
        "redirect": site.post(f"/p/{post['id']}/vote", {"csrf": csrf_of(page.text), "action": "vote"}, allow_redirects=False),
        "error page of the site": site.post(f"/p/{post['id']}/vote", {"action": "vote"}),
        "error page of the API": site.get("/p/" + "0" * 24),
        "unknown workspace": Visitor(stack.url, "no-such-workspace-here").get(),
        "static file": site.get("/static/site.css"),
        "theme": site.get("/theme.css"),
        "missing file": site.get("/static/nope.js"),
    }
    statuses = {kind: r.status_code for kind, r in answers.items()}
    assert statuses == {"page": 200, "redirect": 303, "error page of the site": 403, "error page of the API": 404,
                        "unknown workspace": 404, "static file": 200, "theme": 200, "missing file": 404}
    for kind, r in answers.items():
        for name, value in SECURITY_HEADERS.items():
            assert r.headers.get(name) == value, (kind, name)
    for kind in ("error page of the site", "error page of the API", "unknown workspace", "missing file"):
        assert answers[kind].headers["Content-Type"].startswith("text/html"), kind
        assert answers[kind].headers["Cache-Control"] == "no-store", kind
    assert answers["static file"].headers["Cache-Control"] == "public, max-age=300"
    # files are everyone's: they neither set nor read a visitor's cookies
    assert "Set-Cookie" not in answers["static file"].headers and "Set-Cookie" not in answers["theme"].headers


def test_the_board_sorts_by_top_trending_or_new(site, workspace):
    """Top (the default), Trending (the last two weeks' votes first: services/posts/tests/test_trending.py)
    and New, as tabs; an unknown order shows the default."""
    older = create_post(workspace, "Older but voted")
    create_post(workspace, "Newer without votes")
    voted = workspace.api.post(f"{workspace.path}/posts/{older['id']}/vote", user=workspace.user_token("voter"))
    assert voted.status_code in (200, 201), voted.text
    default = site.get().text
    tabs = re.findall(r'data-sort="(\w+)"( aria-current="page")?>(\w+)</a>', default.split('id="f-sort"')[1].split("</nav>")[0])
    assert tabs == [("top", ' aria-current="page"', "Top"), ("trending", "", "Trending"), ("new", "", "New")]
    assert default.index("Older but voted") < default.index("Newer without votes")
    newest = site.get("?sort=new").text
    assert newest.index("Newer without votes") < newest.index("Older but voted")
    trending = site.get("?sort=trending").text
    assert trending.index("Older but voted") < trending.index("Newer without votes")
    assert 'data-sort="trending" aria-current="page"' in trending
    assert 'data-sort="top" aria-current="page"' in site.get("?sort=hottest").text
