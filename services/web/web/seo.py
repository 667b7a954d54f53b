"""Search engines and sharing: the address a page is known by, what a link preview says of it,
and the workspace's ``sitemap.xml`` and ``robots.txt``.

Only what an anonymous visitor may see goes into any of them: the sitemap is read from the API
as nobody (a fresh anonymous id, no cookie), and a page that shows more than that (a post that
is not approved, anything of an account or of the team) is ``noindex`` with no canonical
address nor preview tags (``templates/seo.html``; ``base.html`` makes ``noindex`` the default).

A page's canonical address is on the workspace's verified custom domain when it has one (the
gateway serves the site at that domain's root: ``/b/{slug}/p/x`` is ``https://domain/p/x``),
else under the platform's public base URL.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote
from xml.sax.saxutils import escape

from web.api import ApiError
from web.render import markdown
from web.resources import PageResource
from web.shapes import Asset

# The sitemap protocol's limit of one file; the API lists at most this many posts per call and
# skips at most OFFSET_MAX (beyond it a board is read again from its other end).
SITEMAP_MAX = 50_000
LIST_LIMIT = 100
OFFSET_MAX = 10_000
# Crawlers read these again after ten minutes (a new post is in the next read).
MAX_AGE = 600
# A preview's description: search engines show about this many characters.
SUMMARY_MAX = 160
# What no crawler should open: the team's area, accounts, sign-in and forms (robots.txt).
DISALLOWED = ("/admin", "/account", "/sign-in", "/sso", "/join", "/new", "/unsubscribe", "/p/*/edit", "/p/*/delete")
# The posts anonymous visitors see; a merged post stays approved and its page says where it went.
PUBLIC_STATES = ("approved",)


def site_url(public_base_url: str, branding: dict | None, slug: str) -> str:
    """Where the workspace's site is: its verified custom domain's root, or ``/b/{slug}`` of the platform."""
    domain = (branding or {}).get("customDomain")
    if domain:
        return f"https://{domain}"
    return f"{public_base_url.rstrip('/')}/b/{quote(slug)}"


def canonical(public_base_url: str, branding: dict | None, slug: str, path: str = "") -> str:
    """The absolute address of the site's page ``path`` (``""`` the board, ``/p/x`` a post)."""
    root = site_url(public_base_url, branding, slug)
    if not path and (branding or {}).get("customDomain"):
        return root + "/"
    return root + path


def summary(text: str | None, limit: int = SUMMARY_MAX) -> str:
    """Markdown as one line of plain text, cut at a word within ``limit`` characters."""
    plain = html.unescape(re.sub(r"<[^>]+>", " ", str(markdown(text or ""))))
    plain = " ".join(plain.split())
    if len(plain) <= limit:
        return plain
    cut = plain[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,.;:") + "…"


def is_public(post: dict) -> bool:
    return post.get("moderationState") in PUBLIC_STATES


def absolute_image(url: str | None) -> str | None:
    """A logo as a preview may show it: an absolute http(s) address, else none."""
    return url if url and re.match(r"https?://", url) else None


def install(templates, public_base_url: str) -> None:
    """What ``templates/seo.html`` calls: the canonical address of a page, a text's summary."""
    templates.globals["canonical_url"] = lambda branding, slug, path="": canonical(public_base_url, branding, slug, path)
    templates.globals["share_image"] = absolute_image
    templates.filters["summary"] = summary


def sitemap_paths(site, visitor) -> list[str]:
    """The paths (under the site's root) of the board, roadmap, changelog and every post the
    API lists to ``visitor`` (anonymous), at most ``SITEMAP_MAX`` in all.

    The API skips at most ``OFFSET_MAX`` posts, so each board is read newest first and, when it
    holds more than that, oldest first too until the two meet: up to about 20,000 posts per board."""
    paths = ["", "/roadmap", "/changelog"]
    seen: set[str] = set()
    boards = site._call(visitor, "GET", "/boards")["items"]
    for board in boards:
        for sort in ("newest", "oldest"):
            met = False
            for offset in range(0, OFFSET_MAX + 1, LIST_LIMIT):
                items = site._call(visitor, "GET", "/posts", query={
                    "board": board["slug"], "sort": sort, "limit": LIST_LIMIT, "offset": offset})["items"]
                for post in items:
                    if post["id"] in seen:
                        met = sort == "oldest"
                        continue
                    seen.add(post["id"])
                    if is_public(post):
                        paths.append(f"/p/{quote(post['id'])}")
                        if len(paths) >= SITEMAP_MAX:
                            return paths
                if met or len(items) < LIST_LIMIT:
                    break
            else:
                continue  # the newest-first read stopped at OFFSET_MAX: read the rest from the other end
            break
    return paths


def sitemap_xml(urls: list[str]) -> bytes:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    lines += [f"<url><loc>{escape(url)}</loc></url>" for url in urls]
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode()


def robots_txt(root: str, prefixes: list[str]) -> bytes:
    """Everything may be crawled but the team's area, accounts and forms; ``prefixes``: the
    site's paths on this host (``/b/{slug}``; on a custom domain its root as well)."""
    lines = ["User-agent: *", "Allow: /"]
    lines += [f"Disallow: {prefix}{path}" for prefix in prefixes for path in DISALLOWED]
    lines += ["", f"Sitemap: {root}/sitemap.xml", ""]
    return "\n".join(lines).encode()


class SeoResource(PageResource):
    """A file for crawlers: the same for everyone, read as nobody (``public``: no cookie read or set)."""

    def __init__(self, context):
        super().__init__(context)
        self.public_base_url = context.settings.public_base_url

    def _branding(self, visitor) -> dict:
        return self.site._call(visitor, "GET", "/branding")


class Sitemap(SeoResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.sitemap, public=True)

    def sitemap(self, visitor) -> Asset:
        branding = self._branding(visitor)
        urls = [canonical(self.public_base_url, branding, visitor.slug, path) for path in sitemap_paths(self.site, visitor)]
        return Asset(sitemap_xml(urls), "application/xml; charset=utf-8", MAX_AGE)


class Robots(SeoResource):
    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.robots, public=True)

    def robots(self, visitor) -> Asset:
        try:
            branding = self._branding(visitor)
        except ApiError as ex:
            if ex.status != 404:
                raise
            branding = None  # no such workspace: nothing to crawl here
        if branding is None:
            return Asset(b"User-agent: *\nDisallow: /\n", "text/plain; charset=utf-8", MAX_AGE)
        # A custom domain serves the site at its root and under /b/{slug} (the pages' own links).
        prefixes = ([""] if branding.get("customDomain") else []) + [f"/b/{quote(visitor.slug)}"]
        root = site_url(self.public_base_url, branding, visitor.slug)
        return Asset(robots_txt(root, prefixes), "text/plain; charset=utf-8", MAX_AGE)
