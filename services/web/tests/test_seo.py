"""Search engines and sharing: what a page says of itself (description, canonical address, link
previews), which pages are kept out of search engines, and the workspace's sitemap and robots.txt.
Only what an anonymous visitor may see is ever in any of them."""

from __future__ import annotations

import time
import uuid
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser

import pytest
import requests

from services.domains.tests.helpers import publish_records, put_domain, verify
from testkit.api import create_workspace

from .helpers import Visitor, create_post, team_member

LONG = ("Exporting to **CSV** would let us [reconcile](https://example.com) the month's invoices in a "
        "spreadsheet without copying every row by hand, which takes our finance team two days at the end "
        "of each quarter and is where mistakes creep in.")
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class Head(HTMLParser):
    """The <meta> and <link rel> tags of a page: ``meta[name or property]`` and ``links[rel]``."""

    def __init__(self, html: str):
        super().__init__()
        self.meta: dict[str, str] = {}
        self.links: dict[str, str] = {}
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and (a.get("name") or a.get("property")):
            self.meta[a.get("name") or a["property"]] = a.get("content") or ""
        elif tag == "link" and a.get("rel"):
            self.links[a["rel"]] = a.get("href") or ""


@pytest.fixture(scope="module")
def ws(stack, api, admin_token):
    """A workspace with a public post (with a private comment) and a post held for moderation."""
    workspace = create_workspace(api, admin_token, name="Seo Co")
    workspace.board("features", "Feature requests")
    public = create_post(workspace, "Export to CSV", LONG)
    r = api.post(f"{workspace.path}/posts/{public['id']}/comments", key=workspace.key,
                 json={"content": "Private-note-for-the-team", "isPrivate": True})
    assert r.status_code == 201, r.text
    held = create_post(workspace, "Held for moderation")
    r = api.patch(f"{workspace.path}/posts/{held['id']}", key=workspace.key, json={"moderationState": "pending"})
    assert r.status_code == 200, r.text
    workspace.public, workspace.held = public, held
    return workspace


def test_public_pages_describe_themselves(stack, ws):
    site = Visitor(stack.url, ws.slug)
    root = f"{stack.url}/b/{ws.slug}"
    for path, title, kind in (("", "Feedback · Seo Co", "website"), (f"/p/{ws.public['id']}", "Export to CSV · Seo Co", "article"),
                              ("/roadmap", "Roadmap · Seo Co", "website"), ("/changelog", "Changelog · Seo Co", "website")):
        page = site.get(path)
        assert page.status_code == 200, page.text
        head = Head(page.text)
        assert "robots" not in head.meta, path
        assert head.links["canonical"] == root + path
        assert head.meta["og:url"] == root + path and head.meta["og:type"] == kind
        assert head.meta["og:title"] == title and head.meta["og:site_name"] == "Seo Co"
        assert head.meta["description"] and head.meta["og:description"] == head.meta["description"]
        assert head.meta["twitter:card"] == "summary"
        assert "og:image" not in head.meta  # the workspace has no logo
        # a tab icon of the page's own, so no browser asks for a /favicon.ico nothing serves
        assert head.links["icon"].startswith("data:image/svg+xml,")
    # a post is described by its own words, as plain text of at most 160 characters
    post = Head(site.get(f"/p/{ws.public['id']}").text).meta["description"]
    assert post.startswith("Exporting to CSV would let us reconcile the month's invoices")
    assert len(post) <= 160 and post.endswith("…") and "**" not in post and "](" not in post
    # a search's results are not a page to index
    assert Head(site.get("?q=csv").text).meta.get("robots") == "noindex"


def test_private_pages_and_hidden_posts_are_not_indexed(stack, ws):
    site = Visitor(stack.url, ws.slug)
    for path in ("/sign-in", "/new", "/admin", f"/p/{ws.held['id']}", "/p/000000000000000000000000"):
        head = Head(site.get(path).text)
        assert head.meta.get("robots") == "noindex", path
        assert "canonical" not in head.links and "og:title" not in head.meta, path
    # the team sees the held post, and it still says nothing a search engine may keep
    team = team_member(stack.url, ws, f"owner-{uuid.uuid4().hex[:8]}@example.com")
    page = team.get(f"/p/{ws.held['id']}")
    assert page.status_code == 200 and "Held for moderation" in page.text
    head = Head(page.text)
    assert head.meta.get("robots") == "noindex"
    assert "canonical" not in head.links and "og:title" not in head.meta and "description" not in head.meta
    assert Head(team.get("/admin").text).meta.get("robots") == "noindex"


def test_sitemap_lists_what_anyone_may_see(stack, ws):
    r = requests.get(f"{stack.url}/b/{ws.slug}/sitemap.xml", timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/xml")
    assert "Set-Cookie" not in r.headers
    urls = [loc.text for loc in ElementTree.fromstring(r.content).iter(SITEMAP + "loc")]
    root = f"{stack.url}/b/{ws.slug}"
    assert urls[:3] == [root, root + "/roadmap", root + "/changelog"]
    assert root + f"/p/{ws.public['id']}" in urls
    assert root + f"/p/{ws.held['id']}" not in urls and len(urls) == 4
    assert "Private-note" not in r.text and "Held for moderation" not in r.text


def test_robots_txt(stack, ws):
    r = requests.get(f"{stack.url}/b/{ws.slug}/robots.txt", timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
    lines = r.text.splitlines()
    assert lines[:2] == ["User-agent: *", "Allow: /"]
    for path in ("/admin", "/account", "/sign-in", "/new"):
        assert f"Disallow: /b/{ws.slug}{path}" in lines
    assert f"Sitemap: {stack.url}/b/{ws.slug}/sitemap.xml" in lines
    unknown = requests.get(f"{stack.url}/b/no-such-{uuid.uuid4().hex[:8]}/robots.txt", timeout=30)
    assert unknown.status_code == 200 and unknown.text.splitlines() == ["User-agent: *", "Disallow: /"]


def test_custom_domain_is_the_canonical_address(stack, api, admin_token, dns_zone):
    workspace = create_workspace(api, admin_token, name="Domain Co")
    workspace.board("features", "Feature requests")
    post = create_post(workspace, "On our own domain")
    domain = f"fb-{uuid.uuid4().hex[:10]}.customer.test"
    publish_records(dns_zone, put_domain(workspace, domain))
    assert verify(workspace)["status"] == "verified"
    # The workspace learns of its verified domain from an event: wait until its branding says so.
    deadline = time.monotonic() + 30
    while api.get(f"{workspace.path}/branding").json().get("customDomain") != domain:
        assert time.monotonic() < deadline, "the branding never named the verified domain"
        time.sleep(0.2)
    host = {"Host": domain}
    board = requests.get(stack.url + "/", headers=host, timeout=30)
    assert Head(board.text).links["canonical"] == f"https://{domain}/"
    page = requests.get(f"{stack.url}/p/{post['id']}", headers=host, timeout=30)
    assert Head(page.text).links["canonical"] == f"https://{domain}/p/{post['id']}"
    sitemap = requests.get(stack.url + "/sitemap.xml", headers=host, timeout=30)
    urls = [loc.text for loc in ElementTree.fromstring(sitemap.content).iter(SITEMAP + "loc")]
    assert urls == [f"https://{domain}/", f"https://{domain}/roadmap", f"https://{domain}/changelog",
                    f"https://{domain}/p/{post['id']}"]
    robots = requests.get(stack.url + "/robots.txt", headers=host, timeout=30).text.splitlines()
    assert "Disallow: /admin" in robots and f"Disallow: /b/{workspace.slug}/admin" in robots
    assert f"Sitemap: https://{domain}/sitemap.xml" in robots
