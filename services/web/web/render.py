"""Templates (Jinja2, autoescaped) and user content: markdown rendered, then sanitised."""

from __future__ import annotations

from urllib.parse import urlsplit

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markupsafe import Markup

from web import reference, shapes

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")


def _image(self, tokens, idx, options, env):
    """An image only from an absolute https:// URL. A browser fetches an image as the viewer,
    with the viewer's cookies: a relative or protocol-relative source (or ``https:/path``,
    which a browser resolves against the page) would make every viewer send a request of the
    author's choosing to this site. Such an image is shown as its alt text."""
    src = tokens[idx].attrGet("src") or ""
    if src[:8].lower() == "https://" and urlsplit(src).netloc:
        return self.image(tokens, idx, options, env)
    return escapeHtml(self.renderInlineAsText(tokens[idx].children or [], options, env))


_md.add_render_rule("image", _image)
ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "table", "thead", "tbody", "tr", "th", "td",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}


def markdown(text: str) -> Markup:
    """Markdown as safe HTML: raw HTML is never passed through, images come only from absolute
    https:// URLs, and what markdown produces is cleaned by nh3 (no script, no event handlers,
    only http(s)/mailto links, rel=noopener)."""
    return _clean(_md.render(text or ""))


def markdown_inline(text: str) -> Markup:
    """One line of markdown (an API field's description) without a paragraph around it, cleaned alike."""
    return _clean(_md.renderInline(text or ""))


def _clean(html: str) -> Markup:
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
    env.filters["markdown_inline"] = markdown_inline
    env.filters["words"] = reference.words
    env.filters["day"] = lambda iso: (iso or "")[:10]
    env.filters["month"] = shapes.month
    env.filters["number"] = shapes.number
    return env
