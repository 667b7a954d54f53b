"""The event catalog as Markdown, derived from the services' declared event schemas.

``feedback events > docs/events.md`` writes the document; a test keeps it equal to this output.
"""

from __future__ import annotations

from typing import Mapping

from common.plugins import ServiceSpec

HEADER = """# Events

Every event a service publishes, generated from the services' declarations
(`ServiceSpec.events`) by `feedback events > docs/events.md`; do not edit by hand.

Each event travels as the envelope `{id, type, timestamp, workspace, data}` on its service's
Kafka topic (key: the workspace slug) and reaches webhook endpoints subscribed to its type,
signed per Standard Webhooks (docs/services/webhooks.md). Below, the fields of `data`;
every field is always present, `null` where marked nullable.
"""


def catalog_markdown(services: Mapping[str, ServiceSpec]) -> str:
    lines = [HEADER]
    for spec in services.values():
        if not spec.events:
            continue
        lines.append(f"## {spec.name} (`{spec.topic}`)\n")
        for type_, schema in spec.events.items():
            lines.append(f"### `{type_}`\n")
            lines += _fields(schema, 0)
            lines.append("")
    return "\n".join(lines)


def _fields(schema: dict, depth: int) -> list[str]:
    lines = []
    for name, field in schema.get("properties", {}).items():
        lines.append(f"{'  ' * depth}- `{name}`: {_type(field)}")
        inner = _object_of(field)
        if inner is not None:
            lines += _fields(inner, depth + 1)
    return lines


def _object_of(schema: dict) -> dict | None:
    """The object schema to list the fields of (also inside nullable and arrays)."""
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return _object_of(option)
    if schema.get("type") == "array":
        return _object_of(schema["items"])
    return schema if schema.get("type") == "object" else None


def _type(schema: dict) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(option) for option in schema["anyOf"]).replace(" or null", ", nullable")
    if "enum" in schema:
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema['items'])}"
    if kind == "string" and schema.get("format") == "date-time":
        return "timestamp"
    if kind == "string" and "pattern" in schema:
        return "id"
    return kind
