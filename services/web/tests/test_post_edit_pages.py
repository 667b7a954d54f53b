"""Editing and deleting posts and comments from the board's pages, and an idea typed before
signing in that survives the sign-in: first as a browser without JavaScript sees them (forms,
a confirmation page before a deletion), then in chromium."""

from __future__ import annotations

import re
import uuid

import pytest

from .browsing import DESKTOP, PHONE, page_problems, screenshots
from .helpers import Visitor, create_post, csrf_of, form_csrf, sso_sign_in, team_member


@pytest.fixture
def board(stack, workspace):
    workspace.board("features", "Feature requests")
    return workspace


def signed_in(stack, workspace, name: str) -> Visitor:
    """A browser without JavaScript signed in as the end user ``name`` (an SSO link)."""
    visitor = Visitor(stack.url, workspace.slug)
    _, done = sso_sign_in(visitor, workspace.user_token(name))
    assert done.status_code == 303, done.text
    return visitor


def submit(visitor: Visitor, title: str, content: str = "", board: str = "features"):
    page = visitor.get("/new")
    return visitor.post("/new", {"csrf": form_csrf(page.text, f"/b/{visitor.slug}/new"), "board": board,
                                 "title": title, "content": content}, allow_redirects=False)


def alert_of(html: str) -> str:
    found = re.search(r'role="alert"[^>]*>([^<]*)<', html)
    return found.group(1) if found else ""


def links(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


# -- without JavaScript --------------------------------------------------------------------------


def test_an_author_edits_and_deletes_their_post_and_others_cannot(stack, board):
    slug = board.slug
    author, other = signed_in(stack, board, "author-1"), signed_in(stack, board, "other-1")
    r = submit(author, "Export to CSV", "All the columns")
    assert r.status_code == 303, r.text
    post_id = r.headers["Location"].rsplit("/", 1)[1]
    page = author.get(f"/p/{post_id}")
    assert f"/b/{slug}/p/{post_id}/edit" in links(page.text) and f"/b/{slug}/p/{post_id}/delete" in links(page.text)
    assert "You can change it until" in page.text
    seen = other.get(f"/p/{post_id}").text
    assert f"/b/{slug}/p/{post_id}/edit" not in links(seen) and f"/b/{slug}/p/{post_id}/delete" not in links(seen)

    # The edit form, a refusal beside it (as typed), then the change.
    form = author.get(f"/p/{post_id}/edit")
    assert form.status_code == 200 and 'value="Export to CSV"' in form.text and "You can change it until" in form.text
    action = f"/b/{slug}/p/{post_id}/edit"
    refused = author.post(f"/p/{post_id}/edit", {"csrf": form_csrf(form.text, action), "title": "   ", "content": "kept as typed"})
    assert refused.status_code == 400 and "title" in alert_of(refused.text) and "kept as typed" in refused.text
    done = author.post(f"/p/{post_id}/edit", {"csrf": form_csrf(form.text, action), "title": "Export to CSV and Excel",
                                             "content": "All the columns"})
    assert done.status_code == 200 and done.url.endswith(f"/p/{post_id}?done=edited"), done.url
    assert "Your changes are saved." in done.text and "<h1>Export to CSV and Excel</h1>" in done.text and "Edited" in done.text
    assert board.api.get(f"{board.path}/posts/{post_id}").json()["editedAt"]

    # Someone else: no form, and a refusal beside the delete button if they post anyway.
    assert other.get(f"/p/{post_id}/edit").status_code == 403
    confirm = other.get(f"/p/{post_id}/delete")
    assert confirm.status_code == 403
    refused = other.post(f"/p/{post_id}/delete", {"csrf": csrf_of(other.get(f"/p/{post_id}").text)})
    assert refused.status_code == 403 and "only its author or the team" in alert_of(refused.text)
    stranger = Visitor(stack.url, slug)
    assert stranger.post(f"/p/{post_id}/delete", {"csrf": csrf_of(stranger.get().text)}).status_code == 401
    assert author.post(f"/p/{post_id}/delete", {"csrf": "forged"}).status_code == 403  # no CSRF proof

    # The author's confirmation step, then the deletion.
    confirm = author.get(f"/p/{post_id}/delete")
    assert confirm.status_code == 200 and "Delete this post?" in confirm.text and "Export to CSV and Excel" in confirm.text
    gone = author.post(f"/p/{post_id}/delete", {"csrf": form_csrf(confirm.text, f"/b/{slug}/p/{post_id}/delete")})
    assert gone.status_code == 200 and gone.url.endswith(f"/b/{slug}?done=deleted") and "The post was deleted." in gone.text
    assert post_id not in gone.text
    assert author.get(f"/p/{post_id}").status_code == 404
    assert board.api.get(f"{board.path}/posts/{post_id}", key=board.key).status_code == 404


def test_comments_are_edited_by_their_author_and_deleted_by_the_team(stack, board):
    slug = board.slug
    post = create_post(board, "Keyboard shortcuts")
    author, replier = signed_in(stack, board, "author-2"), signed_in(stack, board, "replier-2")
    manager = team_member(stack.url, board, f"mgr-{uuid.uuid4().hex[:6]}@example.com", "manager")
    path = f"/p/{post['id']}"
    said = author.post(f"{path}/comments", {"csrf": csrf_of(author.get(path).text), "content": "Vim keys please"}, allow_redirects=False)
    comment_id = said.headers["Location"].rsplit("#c-", 1)[1]
    reply = replier.post(f"{path}/comments", {"csrf": csrf_of(replier.get(path).text), "content": "And Emacs", "parentId": comment_id},
                         allow_redirects=False)
    assert reply.status_code == 303

    edit = f"/b/{slug}{path}/comments/{comment_id}/edit"
    delete = f"/b/{slug}{path}/comments/{comment_id}/delete"
    mine = author.get(path).text
    assert edit in links(mine) and delete in links(mine)
    team_view = manager.get(path).text
    assert delete in links(team_view) and edit not in links(team_view)  # the team deletes, never rewrites
    assert edit not in links(replier.get(path).text) and delete not in links(replier.get(path).text)

    form = author.get(f"{path}/comments/{comment_id}/edit")
    assert form.status_code == 200 and "Vim keys please" in form.text
    refused = author.post(f"{path}/comments/{comment_id}/edit", {"csrf": form_csrf(form.text, edit), "content": ""})
    assert refused.status_code == 400 and alert_of(refused.text)
    done = author.post(f"{path}/comments/{comment_id}/edit", {"csrf": form_csrf(form.text, edit), "content": "Vim and Helix keys"})
    assert done.status_code == 200 and "Your comment is updated." in done.text and "Vim and Helix keys" in done.text
    assert manager.get(f"{path}/comments/{comment_id}/edit").status_code == 403
    refused = manager.post(f"{path}/comments/{comment_id}/edit", {"csrf": csrf_of(manager.get(path).text), "content": "Rewritten"})
    assert refused.status_code == 403 and "only its author" in alert_of(refused.text)

    confirm = manager.get(f"{path}/comments/{comment_id}/delete")
    assert confirm.status_code == 200 and "Delete this comment?" in confirm.text and "Vim and Helix keys" in confirm.text
    gone = manager.post(f"{path}/comments/{comment_id}/delete", {"csrf": form_csrf(confirm.text, delete)})
    assert gone.status_code == 200 and "The comment was deleted." in gone.text
    assert "This comment was deleted." in gone.text and "And Emacs" in gone.text and "Vim and Helix keys" not in gone.text
    assert "Comments (1)" in gone.text
    items = board.api.get(f"{board.path}/posts/{post['id']}/comments").json()["items"]
    assert [(c["deleted"], c["content"]) for c in items] == [(True, ""), (False, "And Emacs")]


def test_an_idea_typed_before_signing_in_fills_the_form_after(stack, board):
    board.settings(anonSubmit=False)
    slug = board.slug
    visitor = Visitor(stack.url, slug)
    r = submit(visitor, "Dark mode for the widget", "It glares at night.\n\nEspecially on phones.")
    assert r.status_code == 401 and "Sign in to post" in r.text
    assert "/sso" not in r.text  # no internal path
    assert "is kept in this browser" in r.text
    assert f"/b/{slug}/sign-in?next=%2Fb%2F{slug}%2Fnew" in links(r.text)
    assert visitor.http.cookies.get("fb_draft")

    _, done = sso_sign_in(visitor, board.user_token("drafter"))
    assert done.status_code == 303
    form = visitor.get("/new")
    assert "Your idea is back" in form.text and 'value="Dark mode for the widget"' in form.text
    assert "It glares at night.\n\nEspecially on phones.</textarea>" in form.text
    posted = visitor.post("/new", {"csrf": form_csrf(form.text, f"/b/{slug}/new"), "board": "features",
                                   "title": "Dark mode for the widget", "content": "It glares at night."}, allow_redirects=False)
    assert posted.status_code == 303 and "/p/" in posted.headers["Location"]
    assert "fb_draft=" in posted.headers.get("Set-Cookie", "")  # cleared: posted
    assert "Your idea is back" not in visitor.get("/new").text

    # Another workspace's board, or a forged cookie, fills nothing.
    visitor.http.cookies.set("fb_draft", "forged.0123456789abcdef0123456789abcdef")
    assert "Your idea is back" not in visitor.get("/new").text
    # A draft too long for a cookie is shown back to copy.
    words = " ".join(uuid.uuid4().hex for _ in range(600))
    long = submit(Visitor(stack.url, slug), "A long one", words)
    assert long.status_code == 401 and "too long to keep" in long.text and words in long.text


# -- in chromium ---------------------------------------------------------------------------------


def test_a_draft_survives_an_email_sign_in_in_a_browser(page, stack, board, maildir):
    """An anonymous visitor types an idea, is asked to sign in, follows the link the sign-in
    page sends by mail, and finds the form filled in; submitting posts it as them. Then the
    pages of this flow and the edit and delete pages pass axe in light and dark, desktop and phone."""
    from testkit.mail import link_in, wait_for_mail

    board.settings(anonSubmit=False)
    site = f"{stack.url}/b/{board.slug}"
    email = f"drafter-{uuid.uuid4().hex[:8]}@example.com"
    page.goto(site + "/new")
    page.fill("#n-title", "Offline mode for the mobile app")
    page.fill("#n-content", "On the train I lose everything.")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Sign in to post"
    assert "/sso" not in page.content()
    shots = screenshots()
    page.screenshot(path=str(shots / "post-sign-in-needed.png"), full_page=True)
    assert page_problems(page, "sign-in-needed") == []
    page.get_by_role("link", name="Sign in to post", exact=True).click()
    page.fill("#si-email", email)
    page.get_by_role("button", name="Email me a sign-in link").click()
    page.wait_for_load_state()
    page.goto(link_in(wait_for_mail(maildir, to=email), f"/b/{board.slug}/sign-in/email?"))
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(re.escape(board.slug) + r"/new$"))
    assert page.input_value("#n-title") == "Offline mode for the mobile app"
    assert page.input_value("#n-content") == "On the train I lose everything."
    assert page.get_by_role("status").first.inner_text().startswith("Your idea is back")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(re.compile(r"/p/[0-9a-f]{24}$"))
    post_id = page.url.rsplit("/", 1)[1]
    session = next(c["value"] for c in page.context.cookies() if c["name"] == "fb_session")
    mine = board.api.get(f"{board.path}/posts/{post_id}", key=session).json()
    assert mine["title"] == "Offline mode for the mobile app" and mine["mine"] is True
    comment = board.api.post(f"{board.path}/posts/{post_id}/comments", key=session, json={"content": "Sync when back online"}).json()

    problems = []
    pages = {"post-own": f"{site}/p/{post_id}", "post-edit": f"{site}/p/{post_id}/edit",
             "post-delete": f"{site}/p/{post_id}/delete", "comment-edit": f"{site}/p/{post_id}/comments/{comment['id']}/edit"}
    for theme in ("light", "dark"):
        board.settings(theme=theme)
        for name, url in pages.items():
            for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
                page.set_viewport_size(size)
                page.goto(url)
                assert page.locator("html").get_attribute("data-theme") == theme
                problems += page_problems(page, f"{name} {theme}{suffix}")
                page.screenshot(path=str(shots / f"{name}-{theme}{suffix}.png"), full_page=True)
    assert problems == []
    # The deletion, through its confirmation page: the post is gone from the board.
    page.goto(f"{site}/p/{post_id}/delete")
    page.get_by_role("button", name="Delete the post").click()
    page.wait_for_url(re.compile(r"\?done=deleted$"))
    assert page.get_by_role("status").first.inner_text() == "The post was deleted."
    assert board.api.get(f"{board.path}/posts/{post_id}", key=board.key).status_code == 404
