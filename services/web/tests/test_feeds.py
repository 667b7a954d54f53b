"""The changelog as feeds (issue 39): an Atom feed and a JSON Feed of the published entries, newest
first, linked from the changelog page; drafts never in them; the same file for everyone."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import feedparser
import pytest

from .helpers import Visitor

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def released(stack, api, admin_token):
    from testkit.api import create_workspace

    workspace = create_workspace(api, admin_token)
    for n, publish in ((1, True), (2, True), (3, False)):
        r = api.post(f"{workspace.path}/changelogs", key=workspace.key, json={
            "title": f"Release {n} <fast>", "slug": f"release-{n}", "content": f"Shipped **thing {n}**.", "publish": publish})
        assert r.status_code == 201, r.text
    return workspace


def test_the_atom_feed_lists_published_entries_newest_first(stack, released):
    site = Visitor(stack.url, released.slug)
    r = site.get("/changelog.atom")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/atom+xml")
    assert "Set-Cookie" not in r.headers and "public" in r.headers["Cache-Control"]
    feed = ET.fromstring(r.content)
    page = f"{stack.url}/b/{released.slug}/changelog"
    assert feed.find(f"{ATOM}id").text == page
    entries = feed.findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}title").text for e in entries] == ["Release 2 <fast>", "Release 1 <fast>"]  # no draft
    first = entries[0]
    assert first.find(f"{ATOM}id").text == page + "#release-2" and first.find(f"{ATOM}link").get("href") == page + "#release-2"
    assert first.find(f"{ATOM}content").get("type") == "html" and "<strong>thing 2</strong>" in first.find(f"{ATOM}content").text
    # as a feed reader reads it: well-formed Atom 1.0, nothing it had to guess
    read = feedparser.parse(r.content)
    assert not read.bozo and read.version == "atom10", read.get("bozo_exception")
    assert [e.title for e in read.entries] == ["Release 2 <fast>", "Release 1 <fast>"]
    assert read.entries[0].link == page + "#release-2" and read.entries[0].published_parsed is not None


def test_the_json_feed_and_the_pages_links(stack, released):
    site = Visitor(stack.url, released.slug)
    r = site.get("/changelog.json")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/feed+json")
    feed = json.loads(r.content)
    assert feed["version"] == "https://jsonfeed.org/version/1.1"
    assert feed["feed_url"] == f"{stack.url}/b/{released.slug}/changelog.json"
    assert [i["title"] for i in feed["items"]] == ["Release 2 <fast>", "Release 1 <fast>"]
    assert "<strong>thing 1</strong>" in feed["items"][1]["content_html"] and feed["items"][0]["date_published"].endswith("Z")
    # JSON Feed 1.1's required fields (feedparser 6.0 reads no JSON Feed)
    assert feed["title"] and all({"id", "url", "title", "content_html", "date_published"} <= set(i) for i in feed["items"])
    page = site.get("/changelog").text
    assert '<link rel="alternate" type="application/atom+xml"' in page and f'href="/b/{released.slug}/changelog.json"' in page
    assert Visitor(stack.url, "no-such-workspace-here").get("/changelog.atom").status_code == 404
