"""Names on the board (issue 37): a post and its comments show who wrote them, on the board's
list and on the post's page; with the workspace's ``hideCustomerNames`` another end user's name
shows nowhere (pages and the API's answers to end users), while the team still sees it."""

from __future__ import annotations

import pytest
from testkit import wait_for

from .helpers import Visitor, create_post, team_member

AVATAR = "https://cdn.example.com/grace.png"


@pytest.fixture(scope="module")
def named(stack, api, admin_token):
    """A workspace with a post and a comment by an SSO user who has a name and an avatar."""
    from testkit.api import create_workspace

    workspace = create_workspace(api, admin_token)
    workspace.board("features", "Feature requests")
    token = workspace.user_token("grace", name="Grace Hopper", avatarURL=AVATAR)
    post = create_post(workspace, "Keyboard shortcuts", "For everything", user=token)
    r = workspace.api.post(f"{workspace.path}/posts/{post['id']}/comments", user=token, json={"content": "Especially search"})
    assert r.status_code == 201, r.text
    return workspace, post


def test_the_board_and_the_post_page_name_the_author(stack, named):
    workspace, post = named
    site = Visitor(stack.url, workspace.slug)
    board = site.get().text
    row = board[board.index(f'data-post-id="{post["id"]}"'):]
    assert '<span class="author">Grace Hopper</span>' in row[:row.index("</li>")]
    assert f'<img class="avatar" src="{AVATAR}"' in row[:row.index("</li>")]
    page = site.get(f"/p/{post['id']}").text
    assert page.count('<span class="author">Grace Hopper</span>') == 2  # the post and the comment


def test_hidden_names_show_as_customer_to_end_users_and_by_name_to_the_team(stack, named):
    workspace, post = named
    workspace.settings(hideCustomerNames=True)
    try:
        site = Visitor(stack.url, workspace.slug)
        other = workspace.user_token("someone-else")
        # The posts service hears of the setting through the workspace's snapshot event.
        wait_for(lambda: workspace.api.get(f"{workspace.path}/posts/{post['id']}", user=other).json()["author"] is None,
                 what="the setting to reach the posts service")
        for path in ("", f"/p/{post['id']}"):
            page = site.get(path).text
            assert "Grace Hopper" not in page and AVATAR not in page
        # The post says when, not who; its comment is a customer's.
        assert '<span class="author anonymous">Customer</span>' in site.get(f"/p/{post['id']}").text
        for answer in (workspace.api.get(f"{workspace.path}/posts/{post['id']}", user=other).json(),
                       workspace.api.get(f"{workspace.path}/posts", user=other).json(),
                       workspace.api.get(f"{workspace.path}/posts/{post['id']}/comments", user=other).json()):
            assert "Grace Hopper" not in str(answer) and AVATAR not in str(answer)
        # The author still sees their own name; the team sees everyone's.
        own = workspace.api.get(f"{workspace.path}/posts/{post['id']}", user=workspace.user_token("grace", name="Grace Hopper"))
        assert own.json()["author"]["name"] == "Grace Hopper"
        member = team_member(stack.url, workspace, "ada@example.com")
        assert member.get(f"/p/{post['id']}").text.count('<span class="author">Grace Hopper</span>') == 2
    finally:
        workspace.settings(hideCustomerNames=False)
