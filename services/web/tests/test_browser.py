"""The board site in a real browser: Debian's chromium driven by Playwright, axe-core for
accessibility, screenshots of every page in light and dark theme.

Skipped (with the reason) where /usr/bin/chromium, playwright or axe-core is missing:
`.ci/run` installs chromium and axe-core (into .cache/axe, ignored by git)."""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from pathlib import Path

import pytest
from testkit import wait_for

from .browsing import AXE, accept_invitation
from .helpers import create_post, invite

@pytest.fixture
def site(stack, workspace):
    workspace.board("features", "Feature requests")
    workspace.settings(anonVote=True, anonComment=True, anonSubmit=True)
    return f"{stack.url}/b/{workspace.slug}"


def count_of(pg, post_id):
    return int(pg.locator(f'[data-post-id="{post_id}"] [data-count]').inner_text())


def test_board_vote_survives_reload(page, site, workspace):
    post = create_post(workspace, "Browser vote")
    page.goto(site)
    assert page.locator("h1").inner_text() == "Feedback"
    assert count_of(page, post["id"]) == 0
    page.locator(f'[data-post-id="{post["id"]}"] button.vote-button').click()
    page.wait_for_load_state()
    assert count_of(page, post["id"]) == 1
    page.reload()
    assert count_of(page, post["id"]) == 1
    assert page.locator(f'[data-post-id="{post["id"]}"] button.vote-button').get_attribute("aria-pressed") == "true"


def test_submit_page_shows_similar_posts(page, site, workspace):
    existing = create_post(workspace, "Export reports to CSV files")
    page.goto(site + "/new")
    page.fill("#n-title", "export csv")
    link = page.locator("#similar a").first
    link.wait_for()
    assert link.inner_text() == "Export reports to CSV files"
    assert link.get_attribute("href").endswith(existing["id"])
    page.fill("#n-content", "Please")
    page.click("form.submit button[type=submit]")
    page.wait_for_url(re.compile(r"/p/[0-9a-f]{24}$"))
    assert page.locator("h1").inner_text() == "export csv"


def test_reply_appears_under_its_parent(page, site, workspace):
    post = create_post(workspace, "Discuss")
    parent = workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", key=workspace.key, json={"content": "Parent comment"}).json()
    workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", key=workspace.key, json={"content": "Later top-level"})
    page.goto(f"{site}/p/{post['id']}")
    item = page.locator(f"#c-{parent['id']}")
    item.locator("summary").click()
    item.locator("textarea").fill("My answer")
    item.locator("button[type=submit]").click()
    page.wait_for_load_state()
    reply = page.locator("li.comment", has_text="My answer")
    assert reply.get_attribute("data-parent-id") == parent["id"] and reply.get_attribute("data-depth") == "1"
    texts = page.locator("li.comment .content").all_inner_texts()
    assert texts.index("Parent comment") + 1 == texts.index("My answer")
    assert page.locator(f"#c-{parent['id']} .badge.team").count() == 1


def test_anonymous_vote_refused_then_sso_sign_in(page, site, workspace):
    workspace.settings(anonVote=False)
    post = create_post(workspace, "Members only")
    page.goto(site)
    page.locator(f'[data-post-id="{post["id"]}"] button.vote-button').click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Sign in to vote"
    assert "/sso?token=" not in page.content()  # the sign-in page's link, not an internal path
    response = page.goto(f"{site}/sso?token={workspace.user_token('browser-user')}")
    assert response.ok and page.locator("h1").inner_text() == "Continue as User browser-user"
    assert not [c for c in page.context.cookies() if c["name"] == "fb_session"]  # opening the link signs nobody in
    page.get_by_role("button", name="Continue as User browser-user").click()
    page.wait_for_url(re.compile(re.escape(workspace.slug) + r"/?$"))
    cookie = [c for c in page.context.cookies() if c["name"] == "fb_session"][0]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert page.locator("text=Sign out").count() == 1
    page.locator(f'[data-post-id="{post["id"]}"] button.vote-button').click()
    page.wait_for_load_state()
    assert count_of(page, post["id"]) == 1


def test_manager_changes_status_and_merges(page, site, workspace):
    a = create_post(workspace, "Single sign-on with Okta")
    b = create_post(workspace, "Okta single sign-on support")
    accept_invitation(page, invite(workspace, "browser-owner@example.com"))
    page.goto(f"{site}/p/{a['id']}")
    page.select_option("#t-status", "planned")
    page.get_by_role("button", name="Save triage").click()
    page.wait_for_load_state()
    assert page.locator(".post .badge[data-status]").first.inner_text() == "Planned"
    page.fill("#t-merge-q", "okta sign-on")
    page.click(".triage button:has-text('Search')")
    page.get_by_role("button", name=f"Merge into {b['title']}").click()
    page.wait_for_load_state()
    assert "Merged into" in page.locator(".notice").inner_text()
    page.click(".notice a")
    page.wait_for_load_state()
    assert page.locator("#merged-here").count() == 1
    page.goto(f"{site}/p/{a['id']}")
    page.click("text=Undo the merge")
    page.wait_for_load_state()
    assert page.locator(".notice").count() == 0


def test_a_manager_triages_from_the_post_page_and_the_board_resorts_by_score(page, site, workspace):
    """With the score formula ``votes * impact``, a manager sets a post's owner, ETA, a tag and
    its impact through the post page's form; the post shows them, the tag's chip takes its
    colour from the site's stylesheet, and the board sorted by score puts it first."""
    r = workspace.api.put(f"{workspace.path}/triage", key=workspace.key, json={
        "tags": [{"slug": "bug", "name": "Bug", "color": "#dc2626"}, {"slug": "ux", "name": "UX", "color": "#2563eb"}],
        "fields": [{"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3}],
        "scoreFormula": "votes * impact"})
    assert r.status_code == 200, r.text
    asked, big = create_post(workspace, "Often asked, small"), create_post(workspace, "Rarely asked, big")
    for i, post in enumerate((asked, asked, asked, big, big)):
        r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/vote", user=workspace.user_token(f"b-voter-{i}"))
        assert r.status_code in (200, 201), r.text
    accept_invitation(page, invite(workspace, "browser-triager@example.com"))

    def board_order():
        return [r.get_attribute("data-post-id") for r in page.locator("li.post-row").all()]

    page.goto(site)
    page.get_by_role("navigation", name="Sort").get_by_role("link", name="Score").click()  # a tab: a plain link
    page.wait_for_url(re.compile(r"sort=score"))
    assert board_order() == [asked["id"], big["id"]]  # 3 x 1 (impact's minimum), 2 x 1

    page.goto(f"{site}/p/{big['id']}")
    page.select_option("#t-owner", label="browser-triager")
    page.fill("#t-eta", "2027-03")
    page.check("#t-tag-ux")
    page.fill("#t-f-impact", "3")
    page.get_by_role("button", name="Save triage").click()
    page.wait_for_load_state()
    chip = page.locator(".post .tags .tag[data-tag=ux]")
    assert chip.inner_text() == "UX" and page.locator(".post .tag[data-tag=bug]").count() == 0
    assert chip.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(37, 99, 235)"
    assert page.locator(".post .eta").inner_text() == "ETA: March 2027"
    assert page.locator("dd[data-owner]").inner_text() == "browser-triager"
    assert page.locator("dd.score").inner_text() == "6" and page.locator("dd[data-field=impact]").inner_text() == "3"
    assert page.is_checked("#t-tag-ux") and page.input_value("#t-f-impact") == "3" and page.input_value("#t-eta") == "2027-03"

    page.goto(f"{site}?sort=score")
    assert board_order() == [big["id"], asked["id"]]  # 2 x 3 = 6, then 3 x 1
    assert page.locator(f'[data-post-id="{big["id"]}"] .score').inner_text() == "Score 6"
    page.select_option("#f-tag", "ux")
    page.wait_for_url(re.compile(r"tag=ux"))
    assert board_order() == [big["id"]]
    stored = workspace.api.get(f"{workspace.path}/posts/{big['id']}", key=workspace.key).json()
    assert stored["eta"] == "2027-03" and stored["fields"] == {"impact": 3} and stored["owner"]["name"] == "browser-triager"


def test_the_suggestion_queue_accept_and_dismiss(page, site, workspace):
    """Two pairs of look-alike posts become two suggestions; on /admin/duplicates a manager
    merges one pair and dismisses the other, and the API agrees."""
    titles = {}
    for title in ("Export reports to CSV files", "Export reports as CSV", "Dark mode for the dashboard", "Dashboard dark mode"):
        titles[create_post(workspace, title)["id"]] = title

    def open_suggestions():
        return workspace.api.get(f"{workspace.path}/suggestions", key=workspace.key).json()["items"]

    suggestions = wait_for(lambda: len(open_suggestions()) >= 2 and open_suggestions(), timeout=60, what="two suggestions")
    assert len(suggestions) == 2, suggestions
    csv = next(s for s in suggestions if "CSV" in s["post"]["title"])
    dark = next(s for s in suggestions if "ark mode" in s["post"]["title"])
    accept_invitation(page, invite(workspace, "browser-dedupe@example.com"))
    page.goto(site)
    page.get_by_role("link", name="Admin", exact=True).click()
    page.get_by_role("navigation", name="Admin").get_by_role("link", name="Duplicates").click()
    page.wait_for_url(re.compile(r"/admin/duplicates$"))
    assert page.locator("li.suggestion").count() == 2
    item = page.locator(f'li[data-suggestion-id="{csv["id"]}"]')
    assert item.locator("a").first.inner_text() == csv["post"]["title"]
    assert f'{round(csv["similarity"] * 100)}% similar' == item.locator(".similarity").inner_text()
    page.get_by_role("button", name=f'Merge {csv["post"]["title"]} into {csv["into"]["title"]}').click()
    page.wait_for_url(re.compile(r"done=accept$"))
    assert page.locator("[role=status]").inner_text() == "Merged."
    assert page.locator("li.suggestion").count() == 1
    page.get_by_role("button", name=f'Dismiss the suggestion for {dark["post"]["title"]}').click()
    page.wait_for_url(re.compile(r"done=dismiss$"))
    assert "Dismissed" in page.locator("[role=status]").inner_text()
    assert page.locator("li.suggestion").count() == 0
    assert "No suggested duplicates" in page.locator("main").inner_text()
    merged = workspace.api.get(f"{workspace.path}/posts/{csv['post']['id']}", key=workspace.key).json()
    assert merged["mergedInto"]["id"] == csv["into"]["id"]
    states = {s["id"]: s["state"] for state in ("accepted", "dismissed") for s in workspace.api.get(
        f"{workspace.path}/suggestions", params={"state": state}, key=workspace.key).json()["items"]}
    assert states == {csv["id"]: "accepted", dark["id"]: "dismissed"}
    # The merged post's page says where it went.
    page.goto(f"{site}/p/{csv['post']['id']}")
    assert "Merged into" in page.locator(".notice").inner_text()


def test_a_colleague_joins_by_mail_registers_a_passkey_and_signs_in_with_it_alone(page, site, workspace, maildir):
    """The owner invites on /admin/team; the colleague opens the link from the mail the local
    SMTP server kept, adds a passkey on /account (Chromium's virtual authenticator), signs out,
    signs in with the passkey alone and changes a post's status, which names them."""
    from testkit.mail import link_in, wait_for_mail

    post = create_post(workspace, "Passkey triage")
    owner = page.context.browser.new_context()
    owner_page = owner.new_page()
    accept_invitation(owner_page, invite(workspace, "pk-owner@example.com"))
    owner_page.goto(site + "/admin/team")
    owner_page.fill("#inv-email", "pk-colleague@example.com")
    owner_page.select_option("#inv-role", "manager")
    owner_page.get_by_role("button", name="Send the invitation").click()
    owner_page.wait_for_load_state()
    assert "Invitation sent to pk-colleague@example.com" in owner_page.locator("main").inner_text()
    owner.close()
    link = link_in(wait_for_mail(maildir, to="pk-colleague@example.com"), f"/b/{workspace.slug}/join?")
    # Passkeys need a domain (WebAuthn refuses an IP address as its relying party): the colleague
    # browses the same platform as localhost, which the platform takes as its own address.
    site = site.replace("127.0.0.1", "localhost")
    link = link.replace("127.0.0.1", "localhost")

    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True, "automaticPresenceSimulation": True}})
    accept_invitation(page, link)
    page.goto(site + "/account")
    probe = workspace.api.post(f"{workspace.path}/passkeys/registration-options", headers={
        "Authorization": "Bearer " + next(c["value"] for c in page.context.cookies() if c["name"] == "fb_session")})
    if probe.status_code == 404:
        pytest.skip("the people service has no passkeys API here yet")
    page.fill("#pk-name", "Test laptop")
    page.get_by_role("button", name="Add a passkey").click()
    page.locator("li[data-passkey-id]", has_text="Test laptop").wait_for()
    page.get_by_role("button", name="Sign out", exact=True).click()
    page.wait_for_load_state()
    assert not [c for c in page.context.cookies() if c["name"] == "fb_session"]
    page.goto(site + "/sign-in")
    page.get_by_role("button", name="Sign in with a passkey").click()
    page.wait_for_url(re.compile(re.escape(workspace.slug) + r"/?$"))
    assert "pk-colleague" in page.locator(".account .who").inner_text()
    page.goto(f"{site}/p/{post['id']}")
    page.select_option("#t-status", "planned")
    page.get_by_role("button", name="Save triage").click()
    page.wait_for_load_state()
    assert page.locator(".post .badge[data-status]").first.inner_text() == "Planned"
    log = workspace.api.get(f"{workspace.path}/audit-log", key=workspace.key).json()["items"]
    assert any(e["type"] == "sign_in" and e["data"].get("method") == "passkey" for e in log), log


def test_a_person_follows_a_post_chooses_mail_and_unsubscribes_from_a_mail(page, site, workspace, maildir):
    """Signed in by an emailed link, a person presses Follow on a post page, turns replies off on
    the preferences page, gets the mail of a status change a manager makes, opens its
    unsubscribe link (which changes nothing yet), presses the button, and the preferences then
    say unsubscribed; the API agrees at every step."""
    from testkit.mail import link_in, wait_for_mail

    email = f"browser-follower-{uuid.uuid4().hex[:8]}@example.com"
    post = create_post(workspace, "Follow this in a browser")
    page.goto(f"{site}/p/{post['id']}")
    assert page.get_by_role("link", name="Sign in to follow this post").count() == 1
    page.goto(site + "/sign-in")
    page.fill("#si-email", email)
    page.get_by_role("button", name="Email me a sign-in link").click()
    page.wait_for_load_state()
    page.goto(link_in(wait_for_mail(maildir, to=email), f"/b/{workspace.slug}/sign-in/email?"))
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(re.escape(workspace.slug) + r"/?$"))
    session = next(c["value"] for c in page.context.cookies() if c["name"] == "fb_session")

    def api(path):
        r = workspace.api.get(f"{workspace.path}{path}", key=session)
        assert r.status_code == 200, r.text
        return r.json()

    page.goto(f"{site}/p/{post['id']}")
    page.get_by_role("button", name="Follow", exact=True).click()
    page.wait_for_load_state()
    button = page.locator("button.follow-button")
    assert button.inner_text() == "Following" and button.get_attribute("aria-pressed") == "true"
    assert api(f"/posts/{post['id']}/follow")["following"] is True

    page.goto(site + "/account")
    page.get_by_role("link", name="Choose which emails you get").click()
    page.wait_for_url(re.compile(r"/account/notifications$"))
    assert page.is_checked("#n-replies") and page.locator("#n-teamActivity").count() == 0
    page.uncheck("#n-replies")
    page.get_by_role("button", name="Save the preferences").click()
    page.wait_for_load_state()
    assert page.locator("[role=status]").inner_text() == "Saved." and not page.is_checked("#n-replies")
    assert api("/me/notifications")["replies"] is False and api("/me/notifications")["statusChanges"] is True

    r = workspace.api.patch(f"{workspace.path}/posts/{post['id']}", key=workspace.key, json={"statusSlug": "planned"})
    assert r.status_code == 200, r.text
    mail = wait_for_mail(maildir, to=email, after=1, timeout=30)  # the first was the sign-in link
    page.goto(link_in(mail, f"/b/{workspace.slug}/unsubscribe?"))
    assert page.locator("h1").inner_text() == "Unsubscribe"
    assert api("/me/notifications")["unsubscribed"] is False  # opening the link changed nothing
    page.get_by_role("button", name="Unsubscribe from Acme").click()
    page.wait_for_load_state()
    assert page.locator("[role=status]").inner_text() == "You will get no more email from Acme."
    assert api("/me/notifications")["unsubscribed"] is True
    page.get_by_role("link", name="notification preferences").click()
    page.wait_for_url(re.compile(r"/account/notifications$"))
    assert page.locator("[data-unsubscribed]").count() == 1
    assert page.get_by_role("button", name="Resubscribe").count() == 1


def test_roadmap_and_changelog(page, site, workspace):
    post = create_post(workspace, "Roadmap item")
    workspace.api.patch(f"{workspace.path}/posts/{post['id']}", key=workspace.key, json={"statusSlug": "planned"})
    workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key,
                       json={"title": "Big release", "slug": "big", "content": "We shipped *it*", "postIds": [post["id"]], "publish": True})
    page.goto(site + "/roadmap")
    assert page.locator('[data-status="planned"] a', has_text="Roadmap item").count() == 1
    page.goto(site + "/changelog")
    assert page.locator("article.entry h2").first.inner_text() == "Big release"
    page.click("article.entry a:has-text('Roadmap item')")
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Roadmap item"


def test_script_in_post_is_inert(page, site, workspace):
    post = create_post(workspace, "<img src=x onerror=alert(1)>", "<script>alert(2)</script>\n\n[x](javascript:alert(3))\n\n<svg onload=alert(4)>")
    page.goto(site)
    page.goto(f"{site}/p/{post['id']}")
    page.locator("text=[x](javascript:alert(3))").count()
    page.wait_for_timeout(300)
    assert page.dialogs == []
    assert page.evaluate("document.querySelectorAll('main script, [onerror], [onload]').length") == 0


def _pages(site, workspace) -> dict[str, str]:
    workspace.api.put(f"{workspace.path}/triage", key=workspace.key, json={
        "tags": [{"slug": "bug", "name": "Bug", "color": "#dc2626"}, {"slug": "idea", "name": "Idea", "color": "#facc15"}],
        "fields": [{"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3},
                   {"key": "platform", "name": "Platform", "type": "multiselect", "options": ["ios", "web"], "public": True},
                   {"key": "segment", "name": "Segment", "type": "select", "options": ["smb", "enterprise"]},
                   {"key": "renewal", "name": "Renewal risk", "type": "checkbox"},
                   {"key": "due", "name": "Due", "type": "date"}, {"key": "note", "name": "Note", "type": "text"}],
        "scoreFormula": "votes * impact"})
    a = create_post(workspace, "Accessible dark mode", "Some **markdown** content")
    create_post(workspace, "Another idea")
    workspace.api.patch(f"{workspace.path}/posts/{a['id']}", key=workspace.key,
                        json={"tags": ["bug", "idea"], "eta": "2027-03", "fields": {"platform": ["web"], "impact": 2}})
    workspace.api.post(f"{workspace.path}/posts/{a['id']}/comments", key=workspace.key, json={"content": "Thanks!"})
    workspace.api.patch(f"{workspace.path}/posts/{a['id']}", key=workspace.key, json={"statusSlug": "planned"})
    workspace.api.post(f"{workspace.path}/changelogs", key=workspace.key,
                       json={"title": "Release", "slug": "rel", "content": "Done", "postIds": [a["id"]], "publish": True})
    # A look-alike, so the duplicates page has a suggestion to show.
    create_post(workspace, "Accessible dark mode please")
    wait_for(lambda: workspace.api.get(f"{workspace.path}/suggestions", key=workspace.key).json()["items"], timeout=60,
             what="a suggested duplicate")
    return {"board": site, "post": f"{site}/p/{a['id']}", "roadmap": f"{site}/roadmap", "changelog": f"{site}/changelog",
            "new": f"{site}/new", "sign-in": f"{site}/sign-in", "sso": f"{site}/sso?token={workspace.user_token('axe')}",
            "email-link": f"{site}/sign-in/email?token={'t' * 43}", "join": f"{site}/join?token={'j' * 43}",
            "unsubscribe": f"{site}/unsubscribe?token={'u' * 43}"}


def test_accessibility_and_screenshots(browser, site, workspace):
    if not AXE.exists():
        pytest.skip(f"axe-core is missing ({AXE}; npm install --prefix .cache/axe axe-core)")
    shots = Path(os.environ.get("FEEDBACK_TEST_LOGS") or tempfile.mkdtemp(prefix="feedback-web-")) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = _pages(site, workspace)
    problems = []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        # axe is injected as a script of the test's own; the site's CSP would refuse it.
        context = browser.new_context(bypass_csp=True, color_scheme=theme, viewport={"width": 1100, "height": 800})
        pg = context.new_page()
        for name, url in pages.items():
            pg.goto(url)
            assert pg.locator("html").get_attribute("data-theme") == theme
            pg.screenshot(path=str(shots / f"{name}-{theme}.png"), full_page=True)
            pg.add_script_tag(path=str(AXE))
            result = pg.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                                 ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)}))")
            problems += [(theme, name, v) for v in result if v["impact"] in ("serious", "critical")]
        # the email form's answer ("check your mail")
        pg.goto(pages["sign-in"])
        pg.fill("#si-email", f"axe-{theme}@example.com")
        pg.get_by_role("button", name="Email me a sign-in link").click()
        pg.wait_for_load_state()
        pg.add_script_tag(path=str(AXE))
        result = pg.evaluate("async () => (await axe.run()).violations.map(v => ({id: v.id, impact: v.impact}))")
        problems += [(theme, "sign-in-sent", v) for v in result if v["impact"] in ("serious", "critical")]
        # a signed-in owner's pages (the triage controls, the team, the account)
        accept_invitation(pg, invite(workspace, f"axe-owner-{theme}@example.com"))
        invite(workspace, f"axe-pending-{theme}@example.com", "manager")
        # the sign-in link's page as a signed-in manager sees it (it says continuing switches account)
        extra = {"queue": f"{site}/admin/queue", "team": f"{site}/admin/team", "account": f"{site}/account",
                 "notifications": f"{site}/account/notifications", "duplicates": f"{site}/admin/duplicates"}
        for name in ("board", "post", "queue", "duplicates", "sso", "team", "account", "notifications", "sign-in"):
            pg.goto(extra.get(name) or pages[name])
            pg.screenshot(path=str(shots / f"manager-{name}-{theme}.png"), full_page=True)
            pg.add_script_tag(path=str(AXE))
            result = pg.evaluate("async () => (await axe.run()).violations.map(v => ({id: v.id, impact: v.impact}))")
            problems += [(theme, "manager-" + name, v) for v in result if v["impact"] in ("serious", "critical")]
        context.close()
    assert not problems, "\n".join(map(str, problems))
    assert len(list(shots.glob("*.png"))) >= 30


def test_a_workspace_without_a_board_accessibility_screenshots_and_first_board(browser, stack, workspace):
    """A workspace with no board: a visitor's empty state and the team's first board form (and
    its refusal) on the board and submit pages, with no serious or critical axe violation, in
    light and dark theme, on a desktop and a 390 px phone (nothing wider than the screen);
    screenshots of each (``no-board-*.png``). Then a manager types a name (the slug follows it),
    creates the board, lands on it and submits the first idea."""
    if not AXE.exists():
        pytest.skip(f"axe-core is missing ({AXE}; npm install --prefix .cache/axe axe-core)")
    shots = Path(os.environ.get("FEEDBACK_TEST_LOGS") or tempfile.mkdtemp(prefix="feedback-web-")) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    site = f"{stack.url}/b/{workspace.slug}"
    problems = []

    def check(pg, name, viewport):
        wide = pg.evaluate("document.documentElement.scrollWidth")
        if wide > viewport["width"]:
            problems.append((name, f"{wide} px wide"))
        pg.screenshot(path=str(shots / f"no-board-{name}.png"), full_page=True)
        pg.add_script_tag(path=str(AXE))
        result = pg.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                             ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)}))")
        problems.extend((name, v) for v in result if v["impact"] in ("serious", "critical"))

    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for device, viewport in (("desktop", {"width": 1100, "height": 800}), ("phone", {"width": 390, "height": 844})):
            context = browser.new_context(bypass_csp=True, color_scheme=theme, viewport=viewport)
            pg = context.new_page()
            for page_name, path in (("board", ""), ("new", "/new")):
                pg.goto(site + path)
                assert pg.locator("h2").first.inner_text() == "This board isn’t open yet"
                assert pg.locator("main select").count() == 0
                check(pg, f"visitor-{page_name}-{theme}-{device}", viewport)
            accept_invitation(pg, invite(workspace, f"no-board-{theme}-{device}@example.com"))
            for page_name, path in (("board", ""), ("new", "/new")):
                pg.goto(site + path)
                assert pg.get_by_role("heading", name="Create your first board").count() == 1
                check(pg, f"manager-{page_name}-{theme}-{device}", viewport)
            pg.fill("#fb-name", "Ideas")
            pg.fill("#fb-slug", "Not a slug!")
            pg.get_by_role("button", name="Create the board").click()
            pg.wait_for_load_state()
            assert pg.locator("#fb-slug").get_attribute("aria-invalid") == "true"
            check(pg, f"manager-refused-{theme}-{device}", viewport)
            context.close()
    assert not problems, "\n".join(map(str, problems))

    # The first board, as a manager makes it in the browser: the slug follows the name.
    context = browser.new_context()
    pg = context.new_page()
    accept_invitation(pg, invite(workspace, "no-board-creator@example.com"))
    pg.goto(site + "/new")
    pg.fill("#fb-name", "Café & Crème ideas")
    assert pg.input_value("#fb-slug") == "cafe-creme-ideas"
    pg.get_by_role("button", name="Create the board").click()
    pg.wait_for_url(re.compile(r"/new\?board=cafe-creme-ideas&created=cafe-creme-ideas$"))
    assert "is open" in pg.locator("[role=status]").inner_text()
    assert pg.locator("#n-board option").all_inner_texts() == ["Café & Crème ideas"]
    pg.fill("#n-title", "The first idea of the first board")
    pg.click("form.submit button[type=submit]")
    pg.wait_for_url(re.compile(r"/p/[0-9a-f]{24}$"))
    assert pg.locator("h1").inner_text() == "The first idea of the first board"
    pg.goto(site)
    assert pg.locator("li.post-row").count() == 1
    context.close()


def test_the_platform_pages_accessibility_and_screenshots(browser, stack):
    """The start page (and its form's refusal) and the API reference: no serious or critical axe
    violation, in the browser's light and dark schemes (the pages follow
    ``prefers-color-scheme``), on a desktop and on a 390 px phone, where nothing is wider than
    the screen; screenshots of each."""
    if not AXE.exists():
        pytest.skip(f"axe-core is missing ({AXE}; npm install --prefix .cache/axe axe-core)")
    shots = Path(os.environ.get("FEEDBACK_TEST_LOGS") or tempfile.mkdtemp(prefix="feedback-web-")) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = {"landing": "/", "landing-refused": "/?workspace=Not+a+slug%21", "api-reference": "/v1/docs"}
    background = {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}
    problems = []
    for theme in ("light", "dark"):
        for device, viewport in (("desktop", {"width": 1280, "height": 900}), ("phone", {"width": 390, "height": 844})):
            context = browser.new_context(bypass_csp=True, color_scheme=theme, viewport=viewport)
            pg = context.new_page()
            for name, path in pages.items():
                if name == "api-reference" and (theme, device) not in (("light", "desktop"), ("dark", "phone")):
                    continue  # the longest page (every operation): each theme once and each width once
                pg.goto(stack.url + path)
                assert pg.locator("html").get_attribute("data-theme") == "system"
                assert pg.evaluate("getComputedStyle(document.body).backgroundColor") == background[theme]
                wide = pg.evaluate("document.documentElement.scrollWidth")
                if wide > viewport["width"]:
                    problems.append((theme, device, name, f"{wide} px wide"))
                pg.screenshot(path=str(shots / f"platform-{name}-{theme}-{device}.png"), full_page=name != "api-reference")
                pg.add_script_tag(path=str(AXE))
                result = pg.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                                     ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)}))")
                problems += [(theme, device, name, v) for v in result if v["impact"] in ("serious", "critical")]
            context.close()
    assert not problems, "\n".join(map(str, problems))
    # The start page's links lead where they say; its form opens a board.
    pg = browser.new_page()
    pg.goto(stack.url + "/")
    pg.get_by_role("link", name="API reference", exact=True).first.click()
    pg.wait_for_url(re.compile(r"/v1/docs$"))
    assert pg.locator("h1").inner_text() == pg.evaluate("fetch('/v1/openapi.json').then(r => r.json()).then(d => d.info.title)")
    pg.goto(stack.url + "/")
    pg.fill("#w-slug", "no-such-workspace")
    pg.get_by_role("button", name="Open the board").click()
    pg.wait_for_url(re.compile(r"/b/no-such-workspace$"))
    pg.close()
