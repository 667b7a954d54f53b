"""Templates (Jinja2, autoescaped) and user content: markdown rendered, then sanitised."""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markupsafe import Markup

from common import i18n
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


HUES = 12  # the generated avatars' colours: classes hue-0 .. hue-11 in site.css


# Times as the reader's locale says them (common.i18n): "3 days ago", "vor 3 Tagen".
relative, exact = i18n.relative, i18n.exact


def initials(name: str | None) -> str:
    """One or two letters for a generated avatar: the first letters of the first and last words."""
    words = [w for w in (name or "").replace("@", " ").replace(".", " ").split() if w[0].isalnum()]
    if not words:
        return "?"
    letters = words[0][0] + (words[-1][0] if len(words) > 1 else "")
    return letters.upper()


def hue(name: str | None) -> int:
    """A colour class number (0 .. HUES - 1) that the same name always gets."""
    return int.from_bytes(hashlib.sha256((name or "").encode()).digest()[:2], "big") % HUES


def https_url(url: str | None) -> str | None:
    """``url`` when it is an absolute https:// address (an avatar image); else None, so no
    relative or other-scheme address makes a viewer's browser send a request."""
    if isinstance(url, str) and url[:8].lower() == "https://" and urlsplit(url).netloc and not any(c.isspace() for c in url):
        return url
    return None


def hex_color(value: str | None) -> str | None:
    """``value`` when it is a ``#rrggbb`` colour (a status colour written into an SVG fill)."""
    if isinstance(value, str) and len(value) == 7 and value[0] == "#" and all(c in "0123456789abcdefABCDEF" for c in value[1:]):
        return value
    return None


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    i18n.install(env)  # the reader's words, dates and numbers (docs/languages.md)
    env.filters["markdown"] = markdown
    env.filters["markdown_inline"] = markdown_inline
    env.filters["words"] = reference.words
    env.filters["day"] = i18n.date
    env.filters["month"] = shapes.month
    env.filters["number"] = shapes.number
    env.filters["initials"] = initials
    env.filters["hue"] = hue
    env.filters["https_url"] = https_url
    env.filters["hex_color"] = hex_color
    return env
