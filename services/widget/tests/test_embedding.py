"""The widget on a customer's page (issue 39), in Chromium: a host page served from another
origin (another port on loopback) with a strict CSP that allows only the platform, the snippet,
and the person identified by a token the test signs as the team's server would.

One workspace for the module (a board, an SSO secret, one published changelog entry, the host's
origin allowed) and few page loads: the whole module runs in about 20 s once the platform is up."""

from __future__ import annotations

import re
import time

import jwt
import pytest
import urllib3

from testkit import create_workspace
from testkit.http import Server

from services.web.tests.browsing import page_problems, screenshots

HOST_CSP = "default-src 'none'; script-src {platform}; connect-src {platform}; style-src {platform}; img-src {platform}"
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme app</title></head>
<body><main><h1>Acme app</h1><p>The customer's own product.</p>{mount}</main>{snippet}</body></html>"""
SNIPPET = '<script src="{platform}/widget/v1.js" data-workspace="{slug}" {extra} async></script>'
# What a page's script keeps of the widget's events, for the test to read (the host's global).
LISTEN = """() => { window.seen = []; for (const e of ['submitted', 'voted', 'tokenExpired'])
  FeedbackWidget.on(e, d => window.seen.push([e, d])); }"""
http = urllib3.PoolManager(retries=False, timeout=10)


def host_page(server: Server, platform: str, slug: str) -> None:
    """The host's pages: ``/`` with the snippet, ``/inline`` mounting the panel into its own
    element, ``/plain`` without the widget; each under the strict CSP."""
    headers = {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": HOST_CSP.format(platform=platform)}

    def serve(mount: str, snippet: str):
        body = PAGE.format(mount=mount, snippet=snippet).encode()
        return lambda req: req.answer(200, body, headers)

    server.routes["/"] = serve("", SNIPPET.format(platform=platform, slug=slug, extra=""))
    server.routes["/inline"] = serve('<section id="feedback"></section>',
                                     SNIPPET.format(platform=platform, slug=slug, extra='data-mount="#feedback"'))
    server.routes["/plain"] = serve("", "")


@pytest.fixture(scope="module")
def setup(stack, api, admin_token):
    ws = create_workspace(api, admin_token, name="Acme")
    ws.board("features", "Feature requests")
    ws.board("bugs", "Bugs")
    host, stranger = Server(), Server()
    for server in (host, stranger):
        host_page(server, stack.url, ws.slug)
    ws.settings(widgetOrigins=[host.url], widgetLabel="Feedback", primaryColor="#1e3a8a")
    r = api.post(f"{ws.path}/changelogs", key=ws.key, json={"title": "Exports are here", "slug": "exports",
                                                            "content": "Download every post as CSV.", "publish": True})
    assert r.status_code == 201, r.text
    yield ws, host, stranger
    host.close()
    stranger.close()


def csp_violations(pg) -> list[str]:
    found = []
    pg.on("console", lambda m: "Content Security Policy" in m.text and found.append(m.text))
    return found


def votes(title: str, count: int) -> re.Pattern:
    """A vote button's accessible name (its visible count read with what it does)."""
    return re.compile(rf"^Vote for {re.escape(title)},\s*{count}\s*votes?$")


def launcher(pg):
    return pg.get_by_role("button", name="Feedback")


def test_an_identified_person_submits_votes_once_follows_and_reads_the_changelog(setup, page, stack):
    ws, host, _ = setup
    violations = csp_violations(page)
    page.goto(host.url + "/plain")
    plain = set(page.evaluate("Object.getOwnPropertyNames(window)"))
    page.goto(host.url + "/")
    launcher(page).wait_for()
    # Nothing but FeedbackWidget is added to the page's globals, and nothing to its layout: the
    # launcher is fixed in place.
    assert set(page.evaluate("Object.getOwnPropertyNames(window)")) - plain == {"FeedbackWidget"}
    assert page.evaluate("getComputedStyle(document.querySelector('[data-feedback-widget]')).position") == "fixed"
    page.evaluate(LISTEN)
    token = ws.user_token("widget-1", name="Wanda")
    page.evaluate("t => FeedbackWidget.identify(t)", token)
    # The published entry is unread for this person: the launcher says so.
    page.get_by_role("button", name="Feedback (1 unread update)").wait_for()

    # Submit: similar posts show while typing, each with its vote button.
    other = ws.api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "Dark mode for reports",
                                                               "content": "Please."}).json()
    launcher(page).click()
    dialog = page.get_by_role("dialog", name="Acme")
    dialog.wait_for()
    focused = "document.querySelector('[data-feedback-widget]').shadowRoot.activeElement"
    assert page.evaluate(f"{focused}.textContent") == "Submit"
    # The focus stays in the dialog: backwards from its first control to its last, and on.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(f"{focused}.textContent") == "Send"
    page.keyboard.press("Tab")
    assert page.evaluate(f"{focused}.getAttribute('aria-label')") == "Close"
    dialog.get_by_label("Title").fill("Dark mode for the reports page")
    dialog.get_by_role("button", name=votes("Dark mode for reports", 0)).wait_for()
    page.screenshot(path=screenshots() / "widget-similar-posts.png")
    dialog.get_by_label("Title").fill("Export to spreadsheets")
    dialog.get_by_label("Details").fill("A button on every report.")
    dialog.get_by_label("Board").select_option(label="Feature requests")
    dialog.get_by_role("button", name="Send").click()
    dialog.get_by_text("Thank you: your request is on the board.").wait_for()
    submitted = page.evaluate("window.seen.filter(([e]) => e === 'submitted').map(([, d]) => d.post)")
    assert [p["title"] for p in submitted] == ["Export to spreadsheets"]
    # On the board, the post is that person's.
    mine = ws.api.get(f"{ws.path}/posts/{submitted[0]['id']}", user=token).json()
    assert mine["mine"] is True and mine["author"]["name"] == "Wanda" and mine["content"] == "A button on every report."

    # My requests: the post with its status.
    dialog.get_by_role("tab", name="My requests").click()
    dialog.get_by_role("link", name="Export to spreadsheets").wait_for()
    assert dialog.get_by_role("tabpanel").get_by_text("Open").is_visible()

    # A vote from the panel counts once with the same person's vote on the board.
    dialog.get_by_role("tab", name="Posts").click()
    dialog.get_by_role("button", name="New").click()
    dialog.get_by_role("button", name=votes("Dark mode for reports", 0)).click()
    voted = dialog.get_by_role("button", name=votes("Dark mode for reports", 1))
    voted.wait_for()
    assert voted.get_attribute("aria-pressed") == "true"
    again = ws.api.post(f"{ws.path}/posts/{other['id']}/vote", user=token)
    assert again.status_code == 200 and again.json()["voteCount"] == 1 and again.json()["voted"] is True
    assert [d["post"]["id"] for e, d in page.evaluate("window.seen") if e == "voted"] == [other["id"]]

    # Reading the changelog clears the badge, for this person, across page loads.
    dialog.get_by_role("tab", name="Changelog").click()
    dialog.get_by_role("heading", name="Exports are here").wait_for()
    page.get_by_role("button", name="Feedback", exact=True).wait_for()
    page.keyboard.press("Escape")
    assert dialog.is_hidden() and page.evaluate(
        "document.querySelector('[data-feedback-widget]').shadowRoot.activeElement.getAttribute('aria-expanded')") == "false"
    page.reload()
    launcher(page).wait_for()
    # Loaded anew, the page's visitor is anonymous, who has not read it; identified, the person has.
    page.get_by_role("button", name="Feedback (1 unread update)").wait_for()
    page.evaluate("t => FeedbackWidget.identify(t)", token)
    page.get_by_role("button", name="Feedback", exact=True).wait_for()
    # ...while another person on this browser still has it unread.
    page.evaluate("t => FeedbackWidget.identify(t)", ws.user_token("widget-2"))
    page.get_by_role("button", name="Feedback (1 unread update)").wait_for()
    page.screenshot(path=screenshots() / "widget-launcher.png")
    assert violations == []


def test_a_persons_last_look_at_the_changelog_follows_them_to_another_device(setup, browser):
    """Kept by the platform for a person (a token with an address): a second browser, with
    nothing in its storage, shows the entry read on the first."""
    ws, host, _ = setup
    token = ws.user_token("widget-devices", email=f"devices-{time.time_ns()}@example.com")
    devices = [browser.new_context() for _ in range(2)]
    try:
        first, second = (device.new_page() for device in devices)
        for pg in (first, second):
            pg.set_default_timeout(15_000)
        first.goto(host.url + "/")
        launcher(first).wait_for()
        first.evaluate("t => FeedbackWidget.identify(t)", token)
        first.get_by_role("button", name="Feedback (1 unread update)").click()
        dialog = first.get_by_role("dialog", name="Acme")
        dialog.get_by_role("tab", name="Changelog").click()
        dialog.get_by_role("heading", name="Exports are here").wait_for()
        seen = lambda: ws.api.get(f"{ws.path}/me/changelog-seen", user=token).json()["seenAt"]  # noqa: E731
        deadline = time.monotonic() + 10
        while seen() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert seen() is not None
        second.goto(host.url + "/")
        launcher(second).wait_for()
        second.evaluate("t => FeedbackWidget.identify(t)", token)
        # Once the changelog is read on this device (the platform's last look kept with it), the
        # launcher counts nothing unread.
        kept = "() => Object.keys(localStorage).some(k => k.endsWith('changelog-seen:user:widget-devices'))"
        deadline = time.monotonic() + 15
        while not second.evaluate(kept) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert second.evaluate(kept)
        second.get_by_role("button", name="Feedback", exact=True).wait_for()
    finally:
        for device in devices:
            device.close()


def test_a_page_whose_origin_is_not_listed_gets_nothing(setup, page, stack):
    ws, host, stranger = setup
    with page.expect_console_message(lambda m: "FeedbackWidget" in m.text):  # its configuration was refused
        page.goto(stranger.url + "/")
    assert page.locator("[data-feedback-widget]").count() == 0
    # The preflight and the request itself are refused, with no CORS header.
    config = f"{stack.url}/widget/v1/{ws.slug}/config"
    preflight = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-feedback-anonymous-id"}
    refused = http.request("OPTIONS", config, headers={"Origin": stranger.url, **preflight})
    assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers
    assert set(refused.json()) == {"error", "code"} and "widgetOrigins" in refused.json()["error"]
    refused = http.request("GET", config, headers={"Origin": stranger.url})
    assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers
    allowed = http.request("OPTIONS", config, headers={"Origin": host.url, **preflight})
    assert allowed.status == 204 and allowed.headers["Access-Control-Allow-Origin"] == host.url
    assert "Origin" in allowed.headers["Vary"] and "X-Feedback-User" in allowed.headers["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in allowed.headers
    unknown = http.request("GET", f"{stack.url}/widget/v1/{ws.slug}-gone/config", headers={"Origin": host.url})
    assert unknown.status == 404 and "Access-Control-Allow-Origin" not in unknown.headers and set(unknown.json()) == {"error", "code"}
    # The script itself is anyone's, cached and revalidated by its content's hash.
    script = http.request("GET", f"{stack.url}/widget/v1.js")
    assert script.status == 200 and script.headers["Content-Type"].startswith("text/javascript")
    again = http.request("GET", f"{stack.url}/widget/v1.js", headers={"If-None-Match": script.headers["ETag"]})
    assert again.status == 304


def test_expired_and_forged_tokens_are_refused_and_the_page_is_asked_for_a_fresh_one(setup, page, stack):
    ws, host, _ = setup
    page.goto(host.url + "/")
    launcher(page).wait_for()
    page.evaluate(LISTEN)
    expired = ws.user_token("widget-3", exp=int(time.time()) - 60)
    page.evaluate("t => FeedbackWidget.identify(t)", expired)
    page.evaluate("FeedbackWidget.open('posts')")
    dialog = page.get_by_role("dialog", name="Acme")
    dialog.get_by_text("Your session has ended").wait_for()
    events = page.evaluate("window.seen")
    assert [e for e, _ in events] == ["tokenExpired"]
    # Back to anonymous: the workspace takes no anonymous requests (anonSubmit is off), which the
    # panel says in words, without asking the page for a token.
    page.evaluate("FeedbackWidget.identify(null); FeedbackWidget.open('submit')")
    dialog.get_by_label("Title").fill("An anonymous idea")
    dialog.get_by_role("button", name="Send").click()
    dialog.get_by_text("Sign in first").wait_for()
    assert [e for e, _ in page.evaluate("window.seen")] == ["tokenExpired"]
    assert "An anonymous idea" not in ws.api.get(f"{ws.path}/posts", key=ws.key).text
    # A token signed with another secret is refused by the gateway's check alike; the refusal
    # names the page's origin, so the page can read it.
    claims = {"id": "widget-4", "name": "Mallory", "exp": int(time.time()) + 600, "aud": ws.slug}
    forged = jwt.encode(claims, "not-the-workspace-secret-" + "x" * 16, algorithm="HS256")
    r = http.request("GET", f"{stack.url}/widget/v1/{ws.slug}/mine", headers={"Origin": host.url, "X-Feedback-User": forged})
    assert r.status == 401 and r.headers["Access-Control-Allow-Origin"] == host.url and set(r.json()) == {"error", "code"}
    for token in (expired, forged):
        assert ws.api.get(f"{ws.path}/posts", user=token).status_code == 401


def test_the_panel_is_axe_clean_in_light_and_dark_and_mounts_inline(setup, page):
    ws, host, _ = setup
    page.set_viewport_size({"width": 320, "height": 640})
    page.goto(host.url + "/")
    page.evaluate("FeedbackWidget.open()")
    dialog = page.get_by_role("dialog", name="Acme")
    dialog.get_by_label("Title").wait_for()
    problems = page_problems(page, "submit, light")
    page.emulate_media(color_scheme="dark")
    page.evaluate("FeedbackWidget.open('posts')")
    dialog.get_by_role("button", name="Top").wait_for()
    dialog.locator("li").first.wait_for()
    problems += page_problems(page, "posts, dark")
    page.screenshot(path=screenshots() / "widget-panel-dark-320.png")
    page.emulate_media(color_scheme="light")
    page.goto(host.url + "/inline")
    region = page.get_by_role("region", name="Acme")
    region.get_by_role("tab", name="Submit").wait_for()
    assert page.locator("[data-feedback-widget]").count() == 0  # no launcher: the page placed it
    problems += page_problems(page, "inline, light")
    assert problems == []
