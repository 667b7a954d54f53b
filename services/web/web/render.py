"""Templates (Jinja2, autoescaped) and user content: markdown rendered, then sanitised."""

from __future__ import annotations

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "table", "thead", "tbody", "tr", "th", "td",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}


def markdown(text: str) -> Markup:
    """Markdown as safe HTML: raw HTML is never passed through, and what markdown produces is
    cleaned by nh3 (no script, no event handlers, only http(s)/mailto links, rel=noopener)."""
    html = _md.render(text or "")
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer",
    )
    return Markup(clean)


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["markdown"] = markdown
    env.filters["day"] = lambda iso: (iso or "")[:10]
    return env
