"""The OpenAPI 3.1 document of the public API, assembled from the plugins' fragments.

Each service keeps the part it serves in its own ``openapi.yaml`` (paths and component
schemas); the gateway merges them over ``openapi_base.yaml`` and serves the result at
``/v1/openapi.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import yaml

from common.config import Settings
from common.plugins import ServiceSpec

BASE = Path(__file__).with_name("openapi_base.yaml")


def build_document(settings: Settings, services: Mapping[str, ServiceSpec]) -> dict:
    doc = yaml.safe_load(BASE.read_text())
    doc["servers"] = [{"url": settings.public_base_url}]
    for spec in services.values():
        if spec.openapi is None:
            continue
        part = yaml.safe_load(Path(spec.openapi).read_text())
        for path, operations in part.get("paths", {}).items():
            doc["paths"].setdefault(path, {}).update(operations)
        for kind, items in part.get("components", {}).items():
            doc["components"].setdefault(kind, {}).update(items)
    return doc


class OpenAPIDocument:
    def __init__(self, document: dict):
        self.document = document

    def on_get(self, req, resp):
        resp.media = self.document
