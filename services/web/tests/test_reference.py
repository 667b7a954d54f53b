"""The API reference in process: an OpenAPI document as field lists (web.reference), its page
(reference.html) and the platform pages' cache (web.platform), without a platform running."""

from __future__ import annotations

import re

import pytest

from common.config import Settings
from common.errors import NotFound
from common.plugins import load_services
from web import reference
from web.api import ApiError
from web.platform import MAX_AGE, REFRESH_SECONDS, Platform, fresh
from web.render import environment
from web.service import Site

DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Test API", "version": "2.0", "description": "Hello **there**."},
    "security": [{}, {"key": []}],
    "tags": [{"name": "things", "description": "All the things."}],
    "paths": {
        "/v1/workspaces/{slug}/things": {
            "parameters": [{"$ref": "#/components/parameters/Slug"}],
            "get": {
                "summary": "List things",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20}},
                               {"name": "slug", "in": "path", "required": True, "description": "overridden here",
                                "schema": {"type": "string"}}],
                "responses": {"200": {"description": "A page", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["items"],
                    "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}}}}},
                    "404": {"$ref": "#/components/responses/NotFound"}},
            },
            "post": {
                "summary": "Make a thing", "operationId": "makeThing", "security": [{"key": []}],
                "requestBody": {"required": True, "content": {"application/json": {"schema": {"allOf": [
                    {"$ref": "#/components/schemas/ThingCreate"},
                    {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]}]}}}},
                "responses": {"201": {"description": "The thing", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Thing"}}}}},
            },
        },
        "/v1/me": {"get": {"summary": "Who I am", "responses": {"200": {"description": "me"}}}},
        "/v1/workspaces/{slug}/things/{id}": {"delete": {"summary": "Remove", "tags": ["things"], "security": [],
                                                         "responses": {"204": {"description": "gone"}}}},
    },
    "components": {
        "parameters": {"Slug": {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}},
        "responses": {"NotFound": {"description": "Not there", "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Error"}}}}},
        "schemas": {
            "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            "ThingCreate": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 80, "description": "its `name`"},
                "kind": {"enum": ["a", "b"]}}},
            "Thing": {"type": "object", "required": ["id", "parent"], "properties": {
                "id": {"type": "string", "pattern": "^[0-9a-f]{24}$"},
                "parent": {"oneOf": [{"$ref": "#/components/schemas/Thing"}, {"type": "null"}]},
                "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
        },
    },
    "webhooks": {"thing.made": {"post": {"summary": "A thing was made", "requestBody": {"content": {"application/json": {
        "schema": {"type": "object", "properties": {"type": {"const": "thing.made"}}}}}},
        "responses": {"2XX": {"description": "delivered"}}}}},
}


def operations(context):
    return {f"{op.method} {op.path}": op for g in context["groups"] for op in g.operations}


def test_operations_are_grouped_by_tag_else_by_the_resource_their_path_names():
    context = reference.context(DOCUMENT)
    assert [(g.title, [f"{o.method} {o.path}" for o in g.operations]) for g in context["groups"]] == [
        ("things", ["GET /v1/workspaces/{slug}/things", "POST /v1/workspaces/{slug}/things",
                    "DELETE /v1/workspaces/{slug}/things/{id}"]),  # untagged, but their path names "things"
        ("Me", ["GET /v1/me"]),
    ]
    assert context["groups"][0].description == "All the things."
    ops = operations(context)
    assert ops["POST /v1/workspaces/{slug}/things"].id == "op-makeThing"
    assert ops["GET /v1/workspaces/{slug}/things"].id == "get-v1-workspaces-slug-things"
    assert [o.path for o in context["webhooks"]] == ["thing.made"]


def test_parameters_merge_the_path_items_and_the_operations_own_wins():
    ops = operations(reference.context(DOCUMENT))
    params = ops["GET /v1/workspaces/{slug}/things"].parameters
    assert [(p.name, p.location, p.required, p.description) for p in params] == [
        ("slug", "path", True, "overridden here"), ("limit", "query", False, "")]
    assert params[1].value.notes == ["1 to 50", "default 20"]
    assert [p.name for p in ops["POST /v1/workspaces/{slug}/things"].parameters] == ["slug"]


def test_schemas_become_nested_field_lists_with_refs_resolved():
    ops = operations(reference.context(DOCUMENT))
    body = ops["POST /v1/workspaces/{slug}/things"].body
    (media, root), = body["content"]
    assert media == "application/json" and body["required"]
    # allOf: one object, the referenced schema's fields and the form's together
    assert [(f.name, f.type, f.required) for f in root.fields] == [
        ("name", "string", True), ("kind", "string", False), ("url", "string", True)]
    assert root.fields[0].notes == ["1 to 80 characters"] and root.fields[0].description == "its `name`"
    assert root.fields[1].notes == ['one of "a", "b"'] and root.fields[2].notes == ["format uri"]
    page = ops["GET /v1/workspaces/{slug}/things"].responses[0].content[0][1]
    items = page.fields[0]
    assert items.name == "items" and items.type == "array of Thing" and [f.name for f in items.fields] == ["id", "parent", "labels", "either"]
    parent = items.fields[1]
    assert parent.type == "Thing or null" and parent.repeated and parent.fields == []  # a cycle: named, not expanded again
    assert items.fields[2].type == "map of integer"
    assert items.fields[3].type == "string or integer" and items.fields[3].variants == []
    thing = {"oneOf": [{"$ref": "#/components/schemas/Error"}, {"type": "string", "maxLength": 3}]}
    either = reference.Schemas(reference.Document(DOCUMENT)).field(thing)
    assert either.variants_kind == "one of" and [(v.type, v.schema_name, v.notes) for v in either.variants] == [
        ("object", "Error", []), ("string", None, ["at most 3 characters"])]
    assert ops["GET /v1/workspaces/{slug}/things"].responses[1].shared == "NotFound"


def test_credentials_are_the_operations_or_the_documents():
    ops = operations(reference.context(DOCUMENT))
    assert ops["GET /v1/me"].security == [[], ["key"]]
    assert ops["POST /v1/workspaces/{slug}/things"].security == [["key"]]
    assert ops["DELETE /v1/workspaces/{slug}/things/{id}"].security == [[]]  # security: [] is no credential


def test_words_and_titles():
    assert reference.words("UriTooLong") == "URI too long" and reference.words("BadRequest") == "Bad request"
    assert reference.title_of("sign-in-settings") == "Sign in settings" and reference.title_of("api-keys") == "API keys"
    assert reference.group_of("/v1/openapi.json") == reference.group_of("/v1") == "api"
    assert reference.group_of("/v1/workspaces/{slug}") == "workspaces"


def render(document) -> str:
    return environment().get_template("reference.html").render(page_theme="system", **reference.context(document))


def test_the_page_links_every_operation_and_escapes_the_document():
    document = {**DOCUMENT, "info": {**DOCUMENT["info"], "description": "<script>alert(1)</script> [x](javascript:alert(1))"}}
    html = render(document)
    for op in operations(reference.context(document)).values():
        assert f'id="{op.id}"' in html and f'href="#{op.id}"' in html
    assert "<script" not in html and "&lt;script&gt;" in html and 'href="javascript' not in html
    assert 'href="#response-NotFound"' in html and 'id="response-NotFound"' in html
    assert "<code>name</code>" in html  # a field's description is markdown


def test_the_platforms_own_document_renders_whole():
    """The document the gateway builds from every plugin: each operation and event has its
    section, and no reference is left unresolved."""
    from gateway.openapi import build_document

    document = build_document(Settings(), load_services())
    html = render(document)
    shown = set(re.findall(r'data-operation="([^"]+)"', html))
    assert shown == {f"{m.upper()} {p}" for p, item in document["paths"].items() for m in item if m in reference.METHODS}
    assert set(re.findall(r'data-webhook="([^"]+)"', html)) == set(document["webhooks"])
    assert "$ref" not in html and "#/components" not in html


class Api:
    """A stand-in of the API client: the document it serves, or the error it raises."""

    def __init__(self, document):
        self.document, self.calls = document, 0

    def call(self, method, path, identity, query=None, payload=None):
        self.calls += 1
        assert (method, path, identity) == ("GET", "/openapi.json", {})
        if isinstance(self.document, Exception):
            raise self.document
        return self.document


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def platform(api, clock=None) -> Platform:
    return Platform(api, environment(), "/b/{slug}", lambda visitor, name: Site.static_file(None, visitor, name), clock or Clock())


def test_the_reference_is_asked_again_after_a_while_and_rendered_again_only_when_it_changed():
    api, clock = Api(DOCUMENT), Clock()
    pages = platform(api, clock)
    first = pages.api_reference()
    assert first.max_age == MAX_AGE and b"Test API" in first.body
    assert pages.api_reference() is first and api.calls == 1
    clock.now += REFRESH_SECONDS
    assert pages.api_reference() is first and api.calls == 2  # asked again, the same document
    api.document = {**DOCUMENT, "info": {**DOCUMENT["info"], "title": "Renamed API"}}
    clock.now += REFRESH_SECONDS
    changed = pages.api_reference()
    assert b"Renamed API" in changed.body and changed is not first
    api.document = ApiError(503, "the API is unavailable")
    clock.now += REFRESH_SECONDS
    assert pages.api_reference() is changed  # the last one, rather than no reference


def test_no_reference_before_the_gateway_answers_once():
    with pytest.raises(ApiError):
        platform(Api(ApiError(503, "the API is unavailable"))).api_reference()
    with pytest.raises(ApiError) as refused:
        platform(Api(["not", "a", "document"])).api_reference()
    assert refused.value.status == 502
    error = platform(Api(None)).error(ApiError(503, "the API is unavailable"))
    assert error.status == 503 and error.max_age == 0 and b"the API is unavailable" in error.body


def test_the_landing_page_and_its_form():
    pages = platform(Api(DOCUMENT))
    page = pages.landing({}, prefers_json=False)
    assert page.status == 200 and page.max_age == MAX_AGE and page.vary == ("Accept",)
    assert b'href="/v1/docs"' in page.body and b'data-theme="system"' in page.body
    assert pages.landing({"workspace": " Acme "}, False).location == "/b/acme"
    refused = pages.landing({"workspace": "../admin"}, False)
    assert refused.status == 400 and refused.location is None and refused.max_age == 0
    assert pages.landing({}, prefers_json=True).content_type == "application/json"
    with pytest.raises(NotFound):
        pages.static("secrets.txt")


def test_if_none_match():
    assert fresh('"abc"', '"abc"') and fresh('W/"abc", "def"', '"abc"') and fresh("*", '"abc"')
    assert not fresh(None, '"abc"') and not fresh('"abd"', '"abc"')
