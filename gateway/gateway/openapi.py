"""The OpenAPI 3.1 document of the public API, assembled from the plugins' fragments.

Each service keeps the part it serves in its own ``openapi.yaml`` (paths and component
schemas); the gateway merges them over ``openapi_base.yaml`` and serves the result at
``/v1/openapi.json``.

A fragment does not spell out what its service validates: ``{x-schema: "pkg.schemas:NAME"}``
stands for the JSON schema the service checks that body or query parameter with, and is
replaced by it here. The document and the service then cannot disagree on what is valid.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Mapping

import yaml

from common.config import Settings
from common.plugins import ServiceSpec, resolve

BASE = Path(__file__).with_name("openapi_base.yaml")
DOCUMENT = "/v1/openapi.json"
INDEX = "/v1"
# Where a plugin may serve this document for people (the board site renders it as HTML there);
# the index names it only when a plugin declares that page.
DOCS = "/v1/docs"
OWN_PATHS = (INDEX, DOCUMENT)  # answered by the gateway itself, with no service behind
# What the gateway itself may answer on any route, whatever the service documents:
# a malformed or foreign credential, an oversized body, a service that cannot be reached.
GATEWAY_RESPONSES = {
    "401": "Unauthorized",
    "403": "Forbidden",
    "413": "PayloadTooLarge",
    "414": "UriTooLong",
    "429": "TooManyRequests",
    "502": "Unavailable",
    "503": "Unavailable",
    "504": "Unavailable",
}


def build_document(settings: Settings, services: Mapping[str, ServiceSpec]) -> dict:
    doc = yaml.safe_load(BASE.read_text())
    doc["servers"] = [{"url": settings.public_base_url}]
    for spec in services.values():
        fragment = spec.openapi_path()
        if fragment is None:
            continue
        part = with_validation_schemas(yaml.safe_load(fragment.read_text()))
        for path, operations in part.get("paths", {}).items():
            doc["paths"].setdefault(path, {}).update(operations)
        for kind, items in part.get("components", {}).items():
            doc["components"].setdefault(kind, {}).update(items)
    doc["webhooks"] = webhook_section(services)
    for path, operations in doc["paths"].items():
        if path in OWN_PATHS:
            continue
        for method, operation in operations.items():
            if method != "parameters":
                for status, name in GATEWAY_RESPONSES.items():
                    operation.setdefault("responses", {}).setdefault(status, {"$ref": f"#/components/responses/{name}"})
            if method == "post":  # every service app takes Idempotency-Key on POST (common.idempotency)
                operation.setdefault("parameters", []).append({"$ref": "#/components/parameters/IdempotencyKey"})
                for status, name in (("400", "BadRequest"), ("409", "IdempotencyConflict"), ("422", "IdempotencyMismatch")):
                    operation["responses"].setdefault(status, {"$ref": f"#/components/responses/{name}"})
    return doc


SCHEMA_REFERENCE = "x-schema"


def with_validation_schemas(node: Any) -> Any:
    """``node`` with every ``{x-schema: "module:NAME"}`` replaced by that schema (a copy)."""
    if isinstance(node, dict):
        if SCHEMA_REFERENCE in node:
            if len(node) != 1:
                raise ValueError(f"{node[SCHEMA_REFERENCE]}: x-schema stands alone (describe in the schema itself)")
            return copy.deepcopy(resolve(node[SCHEMA_REFERENCE]))
        return {key: with_validation_schemas(value) for key, value in node.items()}
    if isinstance(node, list):
        return [with_validation_schemas(value) for value in node]
    return node


def webhook_section(services: Mapping[str, ServiceSpec]) -> dict:
    """OpenAPI's ``webhooks``: one operation per event type a service declares, whose body is
    the event envelope with that type's ``data`` schema (signed per Standard Webhooks)."""
    section = {}
    for spec in services.values():
        for type_, data in sorted(spec.events.items()):
            envelope = {
                "type": "object",
                "required": ["id", "type", "timestamp", "workspace", "data"],
                "properties": {
                    "id": {"type": "string"},
                    "type": {"const": type_},
                    "timestamp": {"type": "string", "format": "date-time"},
                    "workspace": {"type": "string"},
                    "data": data,
                },
            }
            section[type_] = {
                "post": {
                    "summary": f"{type_} (published by the {spec.name} service on {spec.topic})",
                    "description": "Signed with the endpoint's secret: webhook-id, webhook-timestamp and webhook-signature headers.",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": envelope}}},
                    "responses": {"2XX": {"description": "delivered; any other answer is retried"}},
                }
            }
    return section


class OpenAPIDocument:
    def __init__(self, document: dict):
        self.document = document

    def on_get(self, req, resp):
        resp.media = self.document


class ApiIndex:
    """``GET /v1``: what the API is and where its document is (and its documentation, where a
    plugin serves it), so the address ``make run`` prints answers something."""

    def __init__(self, document: dict, docs: bool):
        self.index = {"name": document["info"]["title"], "version": document["info"]["version"], "openapi": DOCUMENT}
        if docs:
            self.index["docs"] = DOCS

    def on_get(self, req, resp):
        resp.media = self.index
