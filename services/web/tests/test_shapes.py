"""What the site makes of the API's answers for its templates, in process."""

from __future__ import annotations

import jwt

from web import shapes


def test_comments_are_indented_by_their_depth_in_the_thread_up_to_a_limit():
    comments = [{"id": "c0", "parentId": None}]
    comments += [{"id": f"c{i}", "parentId": f"c{i - 1}"} for i in range(1, 9)]
    comments.append({"id": "top", "parentId": None})
    depths = [c["depth"] for c in shapes.thread(comments)]
    assert depths == [0, 1, 2, 3, 4, 5, 6, 6, 6, 0]


def test_changelog_shows_published_entries_newest_first():
    entries = [{"slug": "a", "publishedAt": "2030-01-01T00:00:00Z"}, {"slug": "draft", "publishedAt": None},
               {"slug": "b", "publishedAt": "2031-01-01T00:00:00Z"}, {"slug": "also-draft"}]
    assert [e["slug"] for e in shapes.published(entries)] == ["b", "a"]


def test_board_links_keep_the_filters_and_leave_out_empty_ones():
    state = {"board": "features", "status": "", "q": "dark mode", "sort": "top"}
    assert shapes.board_link("acme", state, offset=20) == "/b/acme?board=features&q=dark+mode&sort=top&offset=20"
    assert shapes.board_link("acme", state, offset=0) == "/b/acme?board=features&q=dark+mode&sort=top"


def test_theme_writes_only_a_colour_into_css():
    assert shapes.theme_css({"primaryColor": "#ff0000"}).body == b":root { --primary: #ff0000; }\n"
    for hostile in ("red; } body { display: none", "#ff0000; background: url(x)", "", None):
        assert shapes.theme_css({"primaryColor": hostile}).body == b":root { --primary: #2563eb; }\n"
    assert shapes.theme_css({}).content_type.startswith("text/css")


def test_an_account_is_named_by_its_token_claims():
    def token(**claims):
        return jwt.encode(claims, "k" * 32, algorithm="HS256")

    assert shapes.account(token(id="u1", name=" Ada ")) == {"name": "Ada", "id": "u1", "label": "Ada"}
    assert shapes.account(token(email="ada@example.com"))["label"] == "ada@example.com"
    assert shapes.account(token(id=7, name=["not", "a", "name"]))["label"] == "7"
    assert shapes.account("not-a-token") == {"name": "", "id": "", "label": "this account"}
