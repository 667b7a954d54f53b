"""The platform's own pages through the gateway: the landing page at `/`, the API's index at
`/v1` and the API reference at `/v1/docs`, rendered from the very document `/v1/openapi.json`."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import requests
from web.contract import SECURITY_HEADERS

from .helpers import scripts_of

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class Anchors(HTMLParser):
    """The page's element ids, its in-page links and its operations (``data-operation``)."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.operations: dict[str, str] = {}  # "GET /v1/..." -> the element's id
        self.webhooks: dict[str, str] = {}
        self.stylesheets: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "a" and (a.get("href") or "").startswith("#"):
            self.links.append(a["href"][1:])
        if "data-operation" in a:
            self.operations[a["data-operation"]] = a.get("id")
        if "data-webhook" in a:
            self.webhooks[a["data-webhook"]] = a.get("id")
        if tag == "link" and a.get("rel") == "stylesheet":
            self.stylesheets.append(a["href"])


def anchors_of(html: str) -> Anchors:
    parser = Anchors()
    parser.feed(html)
    return parser


def get(stack, path: str, **kw):
    return requests.get(stack.url + path, timeout=30, **kw)


def test_the_landing_page_says_what_this_is_and_links_the_api(stack):
    r = get(stack, "/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    assert "<h1>Feedback</h1>" in r.text
    for href in ('href="/v1/docs"', 'href="/v1/openapi.json"', 'href="/v1"'):
        assert href in r.text, href
    assert "/b/&lt;slug&gt;" in r.text or "/b/<var>slug</var>" in r.text
    for name, value in SECURITY_HEADERS.items():
        assert r.headers[name] == value
    assert scripts_of(r.text).scripts == [] and scripts_of(r.text).handlers == []
    assert anchors_of(r.text).stylesheets == ["/static/site.css"]
    assert "Set-Cookie" not in r.headers  # the same page for everyone: cacheable
    assert "public" in r.headers["Cache-Control"] and r.headers["ETag"] and "Accept" in r.headers["Vary"]
    assert get(stack, "/", headers={"If-None-Match": r.headers["ETag"]}).status_code == 304
    css = get(stack, "/static/site.css")
    assert css.status_code == 200 and css.headers["Content-Type"].startswith("text/css")
    assert get(stack, "/static/nothing.css").status_code == 404


def test_the_landing_pages_form_opens_a_workspaces_board(stack, workspace):
    r = get(stack, f"/?workspace={workspace.slug}", allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}"
    r = get(stack, "/?workspace=%20" + workspace.slug.upper() + "%20", allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == f"/b/{workspace.slug}"  # as people type it
    refused = get(stack, "/?workspace=not%20a%20slug!", allow_redirects=False)
    assert refused.status_code == 400 and refused.headers["Content-Type"].startswith("text/html")
    assert "not a workspace" in refused.text and 'aria-invalid="true"' in refused.text


def test_a_json_client_asking_the_root_gets_the_links_in_json(stack):
    r = get(stack, "/", headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    assert r.json() == {"name": "Feedback", "api": "/v1", "openapi": "/v1/openapi.json", "docs": "/v1/docs",
                        "board": "/b/{slug}"}
    assert "Accept" in r.headers["Vary"]


def test_the_api_index(api):
    r = api.get("")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    document = api.get("/openapi.json").json()
    assert r.json() == {"name": document["info"]["title"], "version": document["info"]["version"],
                        "openapi": "/v1/openapi.json", "docs": "/v1/docs"}
    assert api.get("/").json() == r.json()  # a trailing slash is the same path
    assert "/v1" in document["paths"]


def test_the_reference_lists_every_operation_of_the_document(stack, api):
    document = api.get("/openapi.json").json()
    r = get(stack, "/v1/docs")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    page = anchors_of(r.text)
    operations = {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
                  if method in METHODS}
    assert set(page.operations) == operations
    assert set(page.webhooks) == set(document["webhooks"])
    assert len(page.ids) == len(set(page.ids)), "an id twice"
    # the table of contents reaches every operation, and every in-page link lands somewhere
    assert set(page.operations.values()) <= set(page.links)
    assert set(page.links) <= set(page.ids), set(page.links) - set(page.ids)
    # no script at all, so none from another host; the stylesheet is the platform's own
    assert scripts_of(r.text).scripts == [] and scripts_of(r.text).handlers == []
    assert all(href.startswith("/") and not href.startswith("//") for href in page.stylesheets)
    assert not re.search(r'<(?:img|iframe|link)[^>]+(?:src|href)="(?:https?:)?//', r.text)
    assert document["info"]["title"] in r.text


def test_the_reference_resolves_refs_into_field_lists(stack, api):
    html = get(stack, "/v1/docs").text
    assert "$ref" not in html and "#/components/" not in html
    section = re.search(r'<section[^>]+data-operation="POST /v1/workspaces/\{slug\}/posts".*?</section>', html, re.S).group(0)
    # the request body's fields (PostCreate), with what the service checks them against
    assert 'data-field="boardSlug"' in section and 'data-field="title"' in section
    assert re.search(r'data-field="title".*?required', section, re.S)
    # a response's schema (Post), its nested objects expanded (the post's status)
    assert re.search(r'data-field="status".*?data-field="slug"', section, re.S)
    # the parameters, the path item's own included
    assert 'data-parameter="slug"' in section and 'data-parameter="Idempotency-Key"' in section


def test_the_reference_is_cacheable(stack):
    r = get(stack, "/v1/docs")
    assert "public" in r.headers["Cache-Control"] and r.headers["ETag"]
    for name, value in SECURITY_HEADERS.items():
        assert r.headers[name] == value
    again = get(stack, "/v1/docs", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == r.headers["ETag"]
    assert get(stack, "/v1/docs", headers={"If-None-Match": '"other"'}).status_code == 200
    assert "Set-Cookie" not in r.headers
