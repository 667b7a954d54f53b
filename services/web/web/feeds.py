"""The changelog where readers already are: an Atom feed and a JSON Feed of a workspace's
published changelog entries (``/b/{slug}/changelog.atom``, ``/b/{slug}/changelog.json``), linked
from the changelog page. Read as nobody, like the sitemap: only what an anonymous visitor sees,
the same file for everyone (no cookie read or set), cached a few minutes.

Each entry's id and link are its place on the changelog page (``changelog#<slug>``, under the
workspace's canonical address: its custom domain when verified); its content is the entry's
markdown as the page renders it (cleaned HTML).
"""

from __future__ import annotations

import json
from xml.sax.saxutils import escape, quoteattr

from web import shapes
from web.render import markdown
from web.seo import SeoResource, canonical
from web.shapes import Asset

# The newest this many published entries: what feed readers keep anyway.
FEED_ENTRIES = 50
MAX_AGE = 300
ATOM_TYPE = "application/atom+xml; charset=utf-8"
JSON_FEED_TYPE = "application/feed+json; charset=utf-8"


def entries_of(site, visitor) -> list[dict]:
    """The workspace's published entries, newest first, as the changelog page reads them."""
    return shapes.published(site._call(visitor, "GET", "/changelogs", query={"limit": FEED_ENTRIES})["items"])


def atom(name: str, page: str, feed_url: str, entries: list[dict]) -> bytes:
    """An Atom 1.0 document (RFC 4287): the feed named after the workspace, one entry per release."""
    updated = entries[0]["publishedAt"] if entries else "1970-01-01T00:00:00Z"
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<feed xmlns="http://www.w3.org/2005/Atom">',
             f"<title>{escape(name)} changelog</title>", f"<id>{escape(page)}</id>", f"<updated>{escape(updated)}</updated>",
             f"<link rel=\"alternate\" type=\"text/html\" href={quoteattr(page)}/>",
             f"<link rel=\"self\" type=\"application/atom+xml\" href={quoteattr(feed_url)}/>",
             f"<author><name>{escape(name)}</name></author>"]
    for e in entries:
        url = f"{page}#{e['slug']}"
        lines += ["<entry>", f"<title>{escape(e['title'])}</title>", f"<id>{escape(url)}</id>",
                  f"<link rel=\"alternate\" type=\"text/html\" href={quoteattr(url)}/>",
                  f"<published>{escape(e['publishedAt'])}</published>", f"<updated>{escape(e['publishedAt'])}</updated>",
                  f"<content type=\"html\">{escape(str(markdown(e.get('content', ''))))}</content>", "</entry>"]
    lines.append("</feed>")
    return ("\n".join(lines) + "\n").encode()


def json_feed(name: str, page: str, feed_url: str, entries: list[dict]) -> bytes:
    """A JSON Feed 1.1 document (https://www.jsonfeed.org/version/1.1/)."""
    return json.dumps({
        "version": "https://jsonfeed.org/version/1.1",
        "title": f"{name} changelog",
        "home_page_url": page,
        "feed_url": feed_url,
        "items": [{"id": f"{page}#{e['slug']}", "url": f"{page}#{e['slug']}", "title": e["title"],
                   "content_html": str(markdown(e.get("content", ""))), "date_published": e["publishedAt"]}
                  for e in entries],
    }, ensure_ascii=False, separators=(",", ":")).encode()


class Feed(SeoResource):
    """One of the changelog's feeds; ``suffix`` names the file, ``build`` writes it."""

    suffix: str
    content_type: str
    build: staticmethod

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.feed, public=True)

    def feed(self, visitor) -> Asset:
        branding = self._branding(visitor)
        page = canonical(self.public_base_url, branding, visitor.slug, "/changelog")
        body = self.build(branding["workspace"]["name"], page, page + self.suffix, entries_of(self.site, visitor))
        return Asset(body, self.content_type, MAX_AGE)


class ChangelogAtom(Feed):
    suffix, content_type, build = ".atom", ATOM_TYPE, staticmethod(atom)


class ChangelogJson(Feed):
    suffix, content_type, build = ".json", JSON_FEED_TYPE, staticmethod(json_feed)
