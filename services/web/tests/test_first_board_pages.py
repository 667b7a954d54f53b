"""A workspace without a board, through the gateway, as a browser without JavaScript sees it:
visitors are told the board is not open yet (never an empty list of boards), the team creates
the first board from the board or submit page, and it then takes a post."""

from __future__ import annotations

import re

from .helpers import Visitor, csrf_of, form_csrf, sso_sign_in, team_member

NOT_OPEN = "This board isn’t open yet"


def board_options(html: str) -> list[str]:
    """The boards a page's submit form offers."""
    select = re.search(r'<select id="n-board" name="board"[^>]*>(.*?)</select>', html, re.S)
    assert select, "no board select on the page"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_a_visitor_of_a_workspace_without_a_board_is_told_it_is_not_open_yet(stack, workspace):
    workspace.settings(anonSubmit=True)
    visitor = Visitor(stack.url, workspace.slug)
    signed_in = Visitor(stack.url, workspace.slug)
    sso_sign_in(signed_in, workspace.user_token("early-bird"))
    for who in (visitor, signed_in):
        for path in ("", "/new"):
            r = who.get(path)
            assert r.status_code == 200, r.text
            assert NOT_OPEN in r.text and "Nothing to see yet — check back soon." in r.text
            main = r.text.split("<main")[1].split("</main>")[0]  # the footer's language choice aside
            assert "<select" not in main and "<option" not in main  # no empty list of boards, no filters
            assert "Create your first board" not in r.text and f'action="/b/{workspace.slug}/boards"' not in r.text
            assert f'action="/b/{workspace.slug}/new"' not in r.text  # no form that could not be sent
    # An anonymous visitor is pointed at signing in, in case they are on the team.
    page = visitor.get("/new").text
    assert f'href="/b/{workspace.slug}/sign-in?next=/b/{workspace.slug}/new"' in page
    # Nobody but the team creates a board, with or without the form's token.
    for who in (visitor, signed_in):
        refused = who.post("/boards", {"csrf": who.csrf("/sign-in"), "name": "Sneaky"})
        assert refused.status_code == 403
    assert workspace.api.get(f"{workspace.path}/boards").json()["items"] == []


def test_a_team_member_creates_the_first_board_and_posts_an_idea_on_it(stack, workspace):
    member = team_member(stack.url, workspace, "first-board-owner@example.com")
    page = member.get()
    assert page.status_code == 200 and "Create your first board" in page.text and NOT_OPEN not in page.text
    assert "<select" not in page.text.split("<main")[1].split("</main>")[0]
    action = f"/b/{workspace.slug}/boards"
    assert member.post("/boards", {"name": "Feature requests", "then": "board"}).status_code == 403  # no form token
    created = member.post("/boards", {"csrf": form_csrf(page.text, action), "name": "Feature requests", "slug": "",
                                      "then": "board"}, allow_redirects=False)
    assert created.status_code == 303 and created.headers["Location"] == f"/b/{workspace.slug}?created=feature-requests"
    board = member.get("?created=feature-requests")
    assert "The board “Feature requests” is open" in board.text and "Create your first board" not in board.text
    assert '<option value="feature-requests"' in board.text  # the board filter lists it
    assert [b["slug"] for b in workspace.api.get(f"{workspace.path}/boards").json()["items"]] == ["feature-requests"]
    # The board now takes a post, through the submit form.
    new = member.get("/new?board=feature-requests")
    assert board_options(new.text) == ["feature-requests"] and "Create your first board" not in new.text
    posted = member.post("/new", {"csrf": csrf_of(new.text), "board": "feature-requests", "title": "The very first idea",
                                  "content": "Made on a brand new board"})
    assert posted.status_code == 200 and re.search(rf"/b/{workspace.slug}/p/[0-9a-f]{{24}}$", posted.url), posted.text
    assert "The very first idea" in posted.text
    listed = Visitor(stack.url, workspace.slug).get()
    assert "The very first idea" in listed.text and NOT_OPEN not in listed.text


def test_the_first_board_from_the_submit_page_lands_back_on_it_with_the_board_chosen(stack, workspace):
    member = team_member(stack.url, workspace, "first-board-submitter@example.com")
    page = member.get("/new")
    assert page.status_code == 200 and "Create your first board" in page.text and 'name="then" value="new"' in page.text
    created = member.post("/boards", {"csrf": form_csrf(page.text, f"/b/{workspace.slug}/boards"), "name": "Bugs",
                                      "slug": "bug-reports", "then": "new"}, allow_redirects=False)
    assert created.status_code == 303
    assert created.headers["Location"] == f"/b/{workspace.slug}/new?board=bug-reports&created=bug-reports"
    landed = member.get("/new?board=bug-reports&created=bug-reports")
    assert "The board “Bugs” is open" in landed.text and board_options(landed.text) == ["bug-reports"]
    assert '<option value="bug-reports" selected>' in landed.text


def test_a_bad_name_or_slug_shows_the_form_again_with_the_reason(stack, workspace):
    member = team_member(stack.url, workspace, "first-board-typo@example.com")
    action = f"/b/{workspace.slug}/boards"
    page = member.get("/new")
    long_name = "A board name far too long " * 5
    r = member.post("/boards", {"csrf": form_csrf(page.text, action), "name": long_name, "slug": "", "then": "new"})
    assert r.status_code == 400 and r.url.endswith("/boards")
    assert re.search(r'role="alert">[^<]*name[^<]*100 characters', r.text), r.text
    name_input = re.search(r'<input id="fb-name"[^>]*>', r.text).group(0)
    assert 'aria-invalid="true"' in name_input and "fb-error" in name_input and f'value="{long_name.strip()}"' in name_input
    assert 'aria-invalid="true"' not in re.search(r'<input id="fb-slug"[^>]*>', r.text).group(0)
    assert "<h1>Submit an idea</h1>" in r.text  # the page it was sent from, again
    # A slug of the wrong form, on the board page: the slug is the field marked.
    r = member.post("/boards", {"csrf": form_csrf(page.text, action), "name": "Ideas", "slug": "Not a slug!", "then": "board"})
    assert r.status_code == 400 and 'role="alert"' in r.text and "<h1>Feedback</h1>" in r.text
    slug_input = re.search(r'<input id="fb-slug"[^>]*>', r.text).group(0)
    assert 'aria-invalid="true"' in slug_input and 'value="Not a slug!"' in slug_input
    # A name with nothing to make a slug of, the slug left empty: the site says so itself.
    r = member.post("/boards", {"csrf": form_csrf(page.text, action), "name": "…", "slug": ""})
    assert r.status_code == 400 and 'role="alert"' in r.text
    assert 'aria-invalid="true"' in re.search(r'<input id="fb-slug"[^>]*>', r.text).group(0)
    assert workspace.api.get(f"{workspace.path}/boards").json()["items"] == []
