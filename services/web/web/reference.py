"""The API reference (``/v1/docs``): the gateway's OpenAPI document as the template's context.

Pure functions of the document the gateway serves at ``/v1/openapi.json`` (the site fetches it,
``web.platform``), so the page cannot drift from the API: every operation of ``paths`` and every
event of ``webhooks`` becomes a section, every ``$ref`` is resolved, and every schema becomes a
nested list of fields with its constraints in words. Nothing here is written for a particular
route: an operation the document adds is on the page the next time it is fetched.

The document's own words (titles, summaries, descriptions, names, types) stay as written; the
words this module adds for people, a schema's constraints ("at most 80 characters"), are in the
reader's language (``common.i18n``), so a context is made for one language.

Operations are grouped by their first tag; an operation without one (the document has none
today) by the resource its path names: the segment after ``/v1/workspaces/{slug}/``, else after
``/v1/`` (``posts``, ``webhooks``, ``me``, ``workspaces``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from common import i18n
from common.i18n import _, ngettext

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
WORKSPACE = ("workspaces", "{slug}")
# Words a group's title writes in capitals (a path segment's words otherwise read as a sentence).
ACRONYMS = {"api": "API", "oidc": "OIDC", "sso": "SSO", "url": "URL", "uri": "URI", "id": "ID"}
# How deep nested schemas are expanded; deeper, the field names its schema without its fields.
MAX_DEPTH = 8


@dataclass
class Field:
    """One entry of a schema's field list: a property, an array's items, a parameter's value."""

    name: str | None = None
    type: str = ""  # in words: "string", "array of objects", "string or null", "one of"
    required: bool = False
    schema_name: str | None = None  # the component's name when it came from a $ref
    description: str = ""
    notes: list[str] = field(default_factory=list)  # constraints in words
    fields: list["Field"] = field(default_factory=list)  # an object's properties (or its items')
    variants: list["Field"] = field(default_factory=list)  # oneOf / anyOf alternatives
    variants_kind: str = ""  # "one of" | "any of"
    repeated: bool = False  # a schema already expanded above (a cycle): its fields are not repeated


@dataclass
class Parameter:
    name: str
    location: str  # path, query, header, cookie
    required: bool
    description: str
    value: Field
    deprecated: bool = False


@dataclass
class Response:
    status: str
    description: str
    shared: str | None = None  # the name of a response of components.responses (described once)
    content: list[tuple[str, Field]] = field(default_factory=list)  # (media type, schema)


@dataclass
class Operation:
    id: str
    method: str  # upper case
    path: str  # the path, or the event type of a webhook
    summary: str
    description: str
    security: list[list[str]]  # alternatives, each the schemes it needs together ([] = no credential)
    parameters: list[Parameter]
    body: dict | None  # {"required", "description", "content": [(media type, Field)]}
    responses: list[Response]
    deprecated: bool = False
    webhook: bool = False


@dataclass
class Group:
    id: str
    title: str
    description: str
    operations: list[Operation]


class Document:
    """The document and its ``$ref`` resolution (local references: ``#/components/...``)."""

    def __init__(self, document: dict):
        self.document = document

    def target(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise ValueError(f"only local references are resolved: {ref}")
        node: Any = self.document
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def resolve(self, node: Any) -> tuple[Any, str | None]:
        """``node`` with its ``$ref`` chain followed, and the last component's name."""
        name, seen = None, set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                raise ValueError(f"a reference loop: {ref}")
            seen.add(ref)
            name = ref.rsplit("/", 1)[-1]
            node = self.target(ref)
        return node, name


def _plain(f: Field) -> bool:
    """A field that is only its type (nothing to list under it)."""
    return not (f.fields or f.variants or f.notes or f.description)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if isinstance(value, int) else "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "any value")


def _types(schema: dict) -> list[str]:
    t = schema.get("type")
    types = [t] if isinstance(t, str) else list(t or [])
    if schema.get("nullable") and "null" not in types:  # OpenAPI 3.0's spelling
        types.append("null")
    return types


def _shown(value) -> str:
    """A schema's number as the reader's locale writes it."""
    return i18n.number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


# A count's bounds in words, by what is counted: exactly n, n to m, at least n, at most n (the
# plural form follows the last number said).
_COUNTED = (
    ("minLength", "maxLength",
     lambda n: ngettext("%(num)s character", "%(num)s characters", n),
     lambda low, n: ngettext("%(low)s to %(num)s character", "%(low)s to %(num)s characters", n, low=low),
     lambda n: ngettext("at least %(num)s character", "at least %(num)s characters", n),
     lambda n: ngettext("at most %(num)s character", "at most %(num)s characters", n)),
    ("minItems", "maxItems",
     lambda n: ngettext("%(num)s item", "%(num)s items", n),
     lambda low, n: ngettext("%(low)s to %(num)s item", "%(low)s to %(num)s items", n, low=low),
     lambda n: ngettext("at least %(num)s item", "at least %(num)s items", n),
     lambda n: ngettext("at most %(num)s item", "at most %(num)s items", n)),
    ("minProperties", "maxProperties",
     lambda n: ngettext("%(num)s entry", "%(num)s entries", n),
     lambda low, n: ngettext("%(low)s to %(num)s entry", "%(low)s to %(num)s entries", n, low=low),
     lambda n: ngettext("at least %(num)s entry", "at least %(num)s entries", n),
     lambda n: ngettext("at most %(num)s entry", "at most %(num)s entries", n)),
)


def _counted(schema: dict, low_key: str, high_key: str, exactly, between, at_least, at_most) -> str | None:
    low, high = schema.get(low_key), schema.get(high_key)
    if low is not None and high is not None:
        return exactly(high) if low == high else between(_shown(low), high)
    if low is not None:
        return at_least(low)
    if high is not None:
        return at_most(high)
    return None


def _bounds(low, high) -> str | None:
    """A number's ``minimum`` and ``maximum`` in words."""
    if low is not None and high is not None:
        return _shown(low) if low == high else _("%(low)s to %(high)s", low=_shown(low), high=_shown(high))
    if low is not None:
        return _("at least %(low)s", low=_shown(low))
    if high is not None:
        return _("at most %(high)s", high=_shown(high))
    return None


def _notes(schema: dict) -> list[str]:
    """A schema's constraints in words (the reader's language; the values as JSON), in the order
    a reader asks them."""
    notes = []
    if "const" in schema:
        notes.append(_("always %(value)s", value=_json(schema["const"])))
    if "enum" in schema:
        notes.append(_("one of %(values)s", values=", ".join(_json(v) for v in schema["enum"])))
    if schema.get("format"):
        notes.append(_("format %(format)s", format=schema["format"]))
    for counted in _COUNTED:
        text = _counted(schema, *counted)
        if text:
            notes.append(text)
    number = _bounds(schema.get("minimum"), schema.get("maximum"))
    if number:
        notes.append(number)
    if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
        notes.append(_("more than %(low)s", low=_shown(schema["exclusiveMinimum"])))
    if "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool):
        notes.append(_("less than %(high)s", high=_shown(schema["exclusiveMaximum"])))
    if "multipleOf" in schema:
        notes.append(_("a multiple of %(step)s", step=_shown(schema["multipleOf"])))
    if schema.get("uniqueItems"):
        notes.append(_("no item twice"))
    if schema.get("pattern"):
        notes.append(_("matches %(pattern)s", pattern=schema["pattern"]))
    if "default" in schema:
        notes.append(_("default %(value)s", value=_json(schema["default"])))
    if schema.get("readOnly"):
        notes.append(_("read only"))
    if schema.get("writeOnly"):
        notes.append(_("write only"))
    if schema.get("deprecated"):
        notes.append(_("deprecated"))
    if schema.get("x-oversize"):
        notes.append(_("longer than its maximum: 413, not 400"))
    for key in ("example", "examples"):
        if key in schema:
            values = schema[key] if key == "examples" and isinstance(schema[key], list) else [schema[key]]
            notes.append(_("for example %(values)s", values=", ".join(_json(v) for v in values[:3])))
    return notes


class Schemas:
    """Schemas as nested field lists."""

    def __init__(self, document: Document):
        self.document = document

    def field(self, node: Any, name: str | None = None, required: bool = False, stack: tuple = ()) -> Field:
        schema, ref = self.document.resolve(node)
        if schema is True or schema is None:
            schema = {}
        if schema is False:
            return Field(name, "nothing", required, description=_("never present"))
        if ref and (ref in stack or len(stack) >= MAX_DEPTH):
            return Field(name, self._type_word(schema) or "object", required, ref,
                         (node.get("description") if isinstance(node, dict) else None) or schema.get("description", ""),
                         repeated=True)
        if ref:
            stack = (*stack, ref)
        schema = self._merged(schema, stack)
        # A $ref's siblings (3.1 allows a description beside it) describe this use of the schema.
        description = (node.get("description") if isinstance(node, dict) and "$ref" in node else None) \
            or schema.get("description", "")
        out = Field(name, "", required, ref, description, _notes(schema))
        types = _types(schema)
        kinds = [t for t in types if t != "null"]
        if "array" in kinds or "items" in schema:
            item = self.field(schema.get("items", {}), None, False, stack)
            out.fields, out.variants, out.variants_kind = item.fields, item.variants, item.variants_kind
            out.notes += [_("each item: %(note)s", note=n) for n in item.notes]
            item_word = item.schema_name or item.type or "any value"
            if item.description and not item.fields:
                out.notes.append(_("each item: %(note)s", note=item.description))
            words = [f"array of {item_word}"] + [t for t in kinds if t != "array"]
        elif "properties" in schema or "object" in kinds or "additionalProperties" in schema:
            needed = set(schema.get("required", []))
            out.fields = [self.field(sub, key, key in needed, stack) for key, sub in (schema.get("properties") or {}).items()]
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra != {}:
                value = self.field(extra, None, False, stack)
                if "propertyNames" in schema:
                    keys = self.field(schema["propertyNames"], None, False, stack)
                    out.notes += [_("each key: %(note)s", note=n) for n in keys.notes]
                out.notes += [_("each value: %(note)s", note=n) for n in value.notes]
                words = [f"map of {value.schema_name or value.type or 'any value'}"]
                out.fields += value.fields
            else:
                words = ["object"]
            words += [t for t in kinds if t != "object"]
        else:
            words = list(kinds)
        for key, kind in (("oneOf", "one of"), ("anyOf", "any of")):
            if key in schema:
                out.variants = [self.field(alt, None, False, stack) for alt in schema[key]]
                out.variants_kind = kind
                nulls = [v for v in out.variants if v.type == "null"]
                if nulls and len(out.variants) == 2:  # "X or null": one type, said as one
                    other = next(v for v in out.variants if v.type != "null")
                    out.type = f"{other.schema_name or other.type} or null"
                    out.fields, out.notes = other.fields, out.notes + other.notes
                    out.description = out.description or other.description
                    out.variants, out.variants_kind, out.repeated = other.variants, other.variants_kind, other.repeated
                    return out
                if not words and all(_plain(v) for v in out.variants):  # "string or integer"
                    out.type = " or ".join(dict.fromkeys(v.schema_name or v.type for v in out.variants))
                    out.variants, out.variants_kind = [], ""
                    return out
                if not words:
                    words = [kind]
        if "null" in types:
            words.append("null")
        if not words and ("const" in schema or "enum" in schema):  # the type the values have
            values = [schema["const"]] if "const" in schema else schema["enum"]
            words = list(dict.fromkeys(_json_type(v) for v in values))
        out.type = " or ".join(words) or "any value"
        return out

    def _type_word(self, schema: dict) -> str:
        kinds = [t for t in _types(schema) if t != "null"]
        return " or ".join(kinds)

    def _merged(self, schema: dict, stack: tuple) -> dict:
        """``allOf`` read as one schema: properties, required and constraints together (the
        document uses it for a body and the form a rule of the service's code takes)."""
        if "allOf" not in schema:
            return schema
        merged: dict = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part, _unused = self.document.resolve(part)
            part = self._merged(part, stack)
            for key, value in part.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *value]
                elif key == "description" and merged.get("description"):
                    merged["description"] += "\n\n" + value
                else:
                    merged.setdefault(key, value)
        return merged


def anchor(method: str, path: str, operation: dict) -> str:
    """The id of an operation's section: its ``operationId``, else its method and path."""
    if operation.get("operationId"):
        return "op-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", operation["operationId"])
    words = re.sub(r"[{}]", "", path).strip("/")
    return f"{method.lower()}-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", words).strip("-") or "root")


def group_of(path: str) -> str:
    parts = [p for p in path.split("/") if p][1:]  # without the version
    if tuple(parts[:2]) == WORKSPACE and len(parts) > 2:
        return parts[2]
    if not parts or "." in parts[0]:
        return "api"  # the index and the document itself
    return parts[0]


def words(name: str) -> str:
    """A component's name as words: ``BadRequest`` -> "Bad request", ``UriTooLong`` -> "URI too long"."""
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name) or [name]
    out = [ACRONYMS.get(p.lower(), p.lower()) for p in parts]
    return " ".join([out[0][:1].upper() + out[0][1:], *out[1:]])


def title_of(key: str) -> str:
    words = [ACRONYMS.get(w, w) for w in re.split(r"[-_ ]+", key) if w]
    if words and words[0] == words[0].lower():
        words[0] = words[0].capitalize()
    return " ".join(words)


class Reference:
    """The page's context from one document."""

    def __init__(self, document: dict):
        self.doc = Document(document)
        self.schemas = Schemas(self.doc)
        self.raw = document

    def context(self) -> dict:
        info = self.raw.get("info", {})
        groups = self.groups()
        webhooks = self.webhooks()
        return {
            "info": {"title": info.get("title", "API"), "version": info.get("version", ""),
                     "description": info.get("description", "")},
            "openapi": self.raw.get("openapi", ""),
            "servers": [s.get("url", "") for s in self.raw.get("servers", [])],
            "schemes": self.security_schemes(),
            "shared": self.shared_responses(),
            "groups": groups,
            "webhooks": webhooks,
            "count": sum(len(g.operations) for g in groups),
        }

    def groups(self) -> list[Group]:
        tags = {t["name"]: t for t in self.raw.get("tags", [])}
        groups: dict[str, Group] = {}
        for path, item in self.raw.get("paths", {}).items():
            item, _unused = self.doc.resolve(item)
            for method in METHODS:
                if method not in item:
                    continue
                op = item[method]
                key = (op.get("tags") or [None])[0] or group_of(path)
                if key not in groups:
                    tag = tags.get(key, {})
                    groups[key] = Group("tag-" + re.sub(r"[^A-Za-z0-9_-]+", "-", key), tag.get("name") if tag else title_of(key),
                                        tag.get("description", ""), [])
                groups[key].operations.append(self.operation(method, path, op, item.get("parameters", [])))
        # The document's tags in its order, then the others by title (the index and document first).
        order = list(tags)
        return sorted(groups.values(), key=lambda g: (
            order.index(g.title) if g.title in order else len(order), g.id != "tag-api", g.title.lower()))

    def operation(self, method: str, path: str, op: dict, shared_parameters: list, webhook: bool = False) -> Operation:
        return Operation(
            id=("webhook-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", path)) if webhook else anchor(method, path, op),
            method=method.upper(),
            path=path,
            summary=op.get("summary", ""),
            description=op.get("description", ""),
            security=self.security(op),
            parameters=self.parameters([*shared_parameters, *op.get("parameters", [])]),
            body=self.body(op.get("requestBody")),
            responses=self.responses(op.get("responses", {})),
            deprecated=bool(op.get("deprecated")),
            webhook=webhook,
        )

    def parameters(self, nodes: list) -> list[Parameter]:
        """The path item's and the operation's, the operation's winning on the same name and place."""
        found: dict[tuple[str, str], Parameter] = {}
        for node in nodes:
            p, _unused = self.doc.resolve(node)
            schema = p.get("schema")
            if schema is None and p.get("content"):
                schema = next(iter(p["content"].values())).get("schema", {})
            value = self.schemas.field(schema or {}, None, False)
            description = p.get("description") or value.description
            value.description = "" if description == value.description else value.description
            found[(p["name"], p["in"])] = Parameter(p["name"], p["in"], bool(p.get("required")), description, value,
                                                    bool(p.get("deprecated")))
        places = {"path": 0, "query": 1, "header": 2, "cookie": 3}
        return sorted(found.values(), key=lambda p: places.get(p.location, 4))

    def body(self, node: Any) -> dict | None:
        if not node:
            return None
        body, name = self.doc.resolve(node)
        return {"required": bool(body.get("required")), "description": body.get("description", ""),
                "content": self.content(body.get("content", {}))}

    def content(self, content: dict) -> list[tuple[str, Field]]:
        return [(media, self.schemas.field(entry.get("schema", {}))) for media, entry in content.items()]

    def responses(self, responses: dict) -> list[Response]:
        out = []
        for status, node in responses.items():
            resolved, name = self.doc.resolve(node)
            shared = name if isinstance(node, dict) and "$ref" in node else None
            out.append(Response(str(status), resolved.get("description", ""), shared,
                                [] if shared else self.content(resolved.get("content", {}))))
        return sorted(out, key=lambda r: r.status)

    def security(self, op: dict) -> list[list[str]]:
        """The alternatives, each the schemes it needs together; ``[]`` among them: no credential."""
        requirements = op.get("security", self.raw.get("security"))
        return [sorted(r) for r in requirements] if requirements else [[]]

    def security_schemes(self) -> list[dict]:
        schemes = self.raw.get("components", {}).get("securitySchemes", {})
        out = []
        for name, node in schemes.items():
            s, _unused = self.doc.resolve(node)
            if s.get("type") == "http":
                how = f"HTTP {s.get('scheme', '')} authentication".replace("bearer", "Bearer")
                if s.get("scheme", "").lower() == "bearer":
                    how = "Authorization: Bearer <credential>"
            elif s.get("type") == "apiKey":
                how = f"{s.get('name')}: <credential>" if s.get("in") == "header" else f"{s.get('in')} {s.get('name')}"
            else:
                how = s.get("type", "")
            out.append({"name": name, "id": "auth-" + name, "how": how, "description": s.get("description", "")})
        return out

    def shared_responses(self) -> list[dict]:
        out = []
        for name, node in self.raw.get("components", {}).get("responses", {}).items():
            r, _unused = self.doc.resolve(node)
            out.append({"name": name, "id": "response-" + name, "description": r.get("description", ""),
                        "headers": [(h, self.doc.resolve(v)[0].get("description", "")) for h, v in r.get("headers", {}).items()],
                        "content": self.content(r.get("content", {}))})
        return out

    def webhooks(self) -> list[Operation]:
        out = []
        for event, item in self.raw.get("webhooks", {}).items():
            item, _unused = self.doc.resolve(item)
            for method in METHODS:
                if method in item:
                    out.append(self.operation(method, event, item[method], item.get("parameters", []), webhook=True))
        return out


def context(document: dict) -> dict:
    """The reference page's template context of ``document`` (an OpenAPI 3.x document)."""
    return Reference(document).context()
