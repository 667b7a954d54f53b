"""What the site makes of the API's answers for its templates, in process."""

from __future__ import annotations

import jwt

from common import i18n
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
    assert shapes.theme_css({"primaryColor": "#ff0000"}).body == b":root { --primary: #ff0000; --on-primary: #000000; }\n"
    for hostile in ("red; } body { display: none", "#ff0000; background: url(x)", "", None):
        assert shapes.theme_css({"primaryColor": hostile}).body == b":root { --primary: #2563eb; --on-primary: #ffffff; }\n"
    assert shapes.theme_css({}).content_type.startswith("text/css")


def test_an_account_is_named_by_its_token_claims():
    def token(**claims):
        return jwt.encode(claims, "k" * 32, algorithm="HS256")

    assert shapes.account(token(id="u1", name=" Ada ")) == {"name": "Ada", "id": "u1", "label": "Ada"}
    assert shapes.account(token(email="ada@example.com"))["label"] == "ada@example.com"
    assert shapes.account(token(id=7, name=["not", "a", "name"]))["label"] == "7"
    assert shapes.account("not-a-token") == {"name": "", "id": "", "label": "this account"}


def test_tag_colours_are_written_into_css_only_as_colours_of_plain_slugs():
    tags = [{"slug": "bug", "color": "#dc2626"}, {"slug": "docs", "color": "#FFFF00"},
            {"slug": "x { } body", "color": "#000000"}, {"slug": "ux", "color": "red; background: url(x)"},
            {"slug": "short", "color": "#fff"}, {"slug": None, "color": None}]
    css = shapes.theme_css({"primaryColor": "#ff0000"}, tags).body.decode()
    assert css == (":root { --primary: #ff0000; --on-primary: #000000; }\n"
                   ".tag-bug { background: #dc2626; border-color: #dc2626; color: #ffffff; }\n"
                   ".tag-docs { background: #FFFF00; border-color: #FFFF00; color: #000000; }\n")


def test_a_tags_text_is_black_or_white_whichever_reads_at_least_4_5_to_1():
    def luminance(color):
        def channel(c):
            c = int(c, 16) / 255
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(color[1:3]) + 0.7152 * channel(color[3:5]) + 0.0722 * channel(color[5:7])

    for background in ("#000000", "#ffffff", "#dc2626", "#2563eb", "#16a34a", "#facc15", "#777777", "#808080", "#ff00ff"):
        a, b = luminance(background), luminance(shapes.text_on(background))
        assert (max(a, b) + 0.05) / (min(a, b) + 0.05) >= 4.5, background


def test_custom_fields_are_shown_in_the_settings_order_with_their_names():
    specs = [{"key": "impact", "name": "Impact", "type": "number"}, {"key": "platform", "name": "Platform", "type": "multiselect", "public": True},
             {"key": "renewal", "name": "Renewal risk", "type": "checkbox"}, {"key": "note", "name": "Note", "type": "text", "public": True},
             {"key": "score_x", "name": "Ratio", "type": "number"}]
    values = {"note": "<b>hi</b>", "renewal": False, "platform": ["ios", "web"], "impact": 3.0, "score_x": 0.125, "ghost": "x"}
    assert shapes.custom_fields(specs, values) == [
        {"key": "impact", "name": "Impact", "value": "3", "internal": True},
        {"key": "platform", "name": "Platform", "value": "ios, web", "internal": False},
        {"key": "renewal", "name": "Renewal risk", "value": "No", "internal": True},
        {"key": "note", "name": "Note", "value": "<b>hi</b>", "internal": False},  # escaped by the template
        {"key": "score_x", "name": "Ratio", "value": "0.12", "internal": True},
    ]
    assert shapes.custom_fields(specs, {"platform": [], "impact": None}) == []


def test_an_eta_reads_as_a_month():
    assert shapes.month("2027-03") == "March 2027" and shapes.month("2030-12") == "December 2030"
    assert shapes.month("2027-13") == "2027-13" and shapes.month(None) == ""
    assert [shapes.number(v) for v in (3, 3.0, 2.5, 1 / 3, -0.001, 1e6)] == ["3", "3", "2.5", "0.33", "0", "1,000,000"]
    # in the reader's language: its month names, its decimal and grouping marks
    with i18n.using("de"):
        assert shapes.month("2027-03") == "März 2027" and shapes.number(1234.5) == "1.234,5"


def test_a_vote_count_has_words_for_each_plural_form_of_the_language():
    """site.js picks the form by Intl.PluralRules' category: every category of the language has one."""
    with i18n.using("en"):
        assert shapes.vote_words() == {"one": "{count} vote", "other": "{count} votes"}
    with i18n.using("ar"):
        assert set(shapes.vote_words()) == {"zero", "one", "two", "few", "many", "other"}
    with i18n.using("ja"):
        assert set(shapes.vote_words()) == {"other"}
    with i18n.using("en-XA"):
        assert all(w.startswith("⟦") and "{count}" in w for w in shapes.vote_words().values())


def test_an_api_refusal_is_explained_in_the_readers_language_with_the_apis_words_as_detail():
    english = shapes.error_page(404, "post not found", "not_found")
    assert english.status == 404 and english.context["explained"] is None and english.context["api"]
    with i18n.using("en-XA"):
        page = shapes.error_page(404, "post not found", "not_found")
        assert page.context["explained"].startswith("⟦") and page.context["message"] == "post not found"
        assert shapes.error_page(403, "a message of the site's own").context["api"] is False


def test_a_board_slug_is_made_from_its_name_as_the_api_allows_it():
    from common.ids import SLUG

    assert shapes.slug_of("Feature requests") == "feature-requests"
    assert shapes.slug_of("  Café & Crème!! ") == "cafe-creme"
    assert shapes.slug_of("iOS 18 -- bugs") == "ios-18-bugs"
    assert shapes.slug_of("日本語") == "" and shapes.slug_of("") == ""
    long = shapes.slug_of("word " * 30)
    assert len(long) <= 48 and SLUG.fullmatch(long)


def test_a_refusal_marks_the_field_it_names():
    fields = ("name", "slug")
    assert shapes.refused_field(400, "field 'name' must be at most 100 characters", fields) == "name"
    assert shapes.refused_field(400, "field 'slug' has an invalid format", fields) == "slug"
    assert shapes.refused_field(409, "board 'ideas' already exists", fields) == "slug"
    assert shapes.refused_field(400, "field 'other' must not be empty", fields) is None
    assert shapes.refused_field(403, "only managers", fields) is None
