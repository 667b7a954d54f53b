"""The first run: the first owner who accepts the invitation of a workspace without a board
lands on a short setup (name, colour, theme, the first board) that ends on the new board, ready
for a post. Through the platform, as a browser without JavaScript, then in Chromium."""

from __future__ import annotations

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, csrf_of, join_team, invite, sso_sign_in


def test_the_first_owner_sets_up_the_workspace_and_lands_on_a_board_that_takes_a_post(stack, workspace):
    owner = Visitor(stack.url, workspace.slug)
    landed = join_team(owner, invite(workspace, "first-owner@example.com"))
    assert landed.url.endswith(f"/b/{workspace.slug}/admin/setup"), landed.url
    assert "Set up your feedback board" in landed.text and 'name="board"' in landed.text
    token = csrf_of(landed.text)
    form = {"csrf": token, "name": "Acme Rockets", "primaryColor": "#0f766e", "theme": "dark", "board": "Ideas & wishes",
            "boardSlug": "", "statuses": "simple"}
    # A refusal keeps what was typed and marks the field.
    refused = owner.post("/admin/setup", {**form, "primaryColor": "teal"})
    assert refused.status_code == 400 and 'role="alert"' in refused.text
    assert 'id="s-color" type="color" name="primaryColor" value="teal" aria-invalid="true"' in refused.text
    assert 'value="Ideas &amp; wishes"' in refused.text
    unnamed = owner.post("/admin/setup", {**form, "board": ""})
    assert unnamed.status_code == 400 and "Give your first board a name." in unnamed.text
    assert workspace.api.get(f"{workspace.path}/boards").json()["items"] == []
    # Saved: the name, the look, and the board, on which the owner lands.
    done = owner.post("/admin/setup", form, allow_redirects=False)
    assert done.status_code == 303 and done.headers["Location"] == f"/b/{workspace.slug}?created=ideas-wishes"
    board = owner.get("?created=ideas-wishes")
    assert "The board “Ideas &amp; wishes” is open." in board.text and "Acme Rockets" in board.text
    branding = workspace.api.get(f"{workspace.path}/branding").json()
    assert (branding["workspace"]["name"], branding["primaryColor"], branding["theme"]) == ("Acme Rockets", "#0f766e", "dark")
    assert [b["slug"] for b in workspace.api.get(f"{workspace.path}/boards").json()["items"]] == ["ideas-wishes"]
    statuses = workspace.api.get(f"{workspace.path}/statuses").json()["items"]
    assert [s["slug"] for s in statuses] == ["open", "planned", "complete"]
    # The board takes a post from a signed-in person.
    person = Visitor(stack.url, workspace.slug)
    sso_sign_in(person, workspace.user_token("first-customer"))
    posted = person.post("/new", {"csrf": person.csrf("/new"), "board": "ideas-wishes", "title": "Dark mode", "content": ""})
    assert posted.status_code == 200 and "Dark mode" in posted.text
    # Set up once: the setup's address now leads to the board, and a board taken is refused.
    again = owner.get("/admin/setup", allow_redirects=False)
    assert again.status_code == 303 and again.headers["Location"] == f"/b/{workspace.slug}"
    taken = owner.post("/admin/setup", {**form, "statuses": "full"})
    assert taken.status_code == 409 and 'id="s-board-slug"' in taken.text and 'aria-invalid="true"' in taken.text


def test_only_the_team_sets_up(stack, workspace):
    visitor = Visitor(stack.url, workspace.slug)
    r = visitor.get("/admin/setup", allow_redirects=False)
    assert r.status_code == 303 and "/sign-in?next=" in r.headers["Location"]
    user = Visitor(stack.url, workspace.slug)
    sso_sign_in(user, workspace.user_token("not-team"))
    for who in (visitor, user):
        refused = who.post("/admin/setup", {"csrf": who.csrf("/sign-in"), "name": "Hijack", "primaryColor": "#000000",
                                            "theme": "light", "board": "Mine"})
        assert refused.status_code == 403
    assert workspace.api.get(f"{workspace.path}/boards").json()["items"] == []


def test_the_setup_in_a_browser(browser, stack, workspace):
    """Axe-clean and no wider than the screen in light and dark, on a desktop and a phone; the
    slug follows the name as it is typed; the owner ends on the board and submits an idea."""
    shots, problems = screenshots(), []
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    pg = context.new_page()
    sign_in_as_team(pg, workspace, "setup-owner@example.com")
    assert pg.url.endswith("/admin/setup")
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, viewport in (("", DESKTOP), ("-phone", PHONE)):
            pg.set_viewport_size(viewport)
            pg.goto(f"{stack.url}/b/{workspace.slug}/admin/setup")
            pg.screenshot(path=str(shots / f"admin-setup-{theme}{size}.png"), full_page=True)
            problems += page_problems(pg, f"setup-{theme}{size}")
    assert not problems, problems
    pg.set_viewport_size(DESKTOP)
    pg.fill("#s-name", "Rocket Co")
    pg.fill("#s-board", "Feature requests")
    assert pg.input_value("#s-board-slug") == "feature-requests"
    pg.get_by_role("button", name="Open the board").click()
    pg.wait_for_url(f"**/b/{workspace.slug}?created=feature-requests")
    assert "is open" in pg.locator(".notice").inner_text()
    pg.get_by_role("link", name="submit the first idea", exact=True).click()
    pg.fill("input[name=title]", "A first idea")
    pg.locator("form.submit button[type=submit]").click()
    pg.wait_for_selector("text=A first idea")
    context.close()
