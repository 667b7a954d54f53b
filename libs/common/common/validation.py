"""Request validation: JSON bodies and query parameters against JSON Schema (jsonschema).

The schemas are the ones the OpenAPI document shows: a service's ``openapi.yaml`` names each by
``x-schema`` and the gateway puts it in (``gateway/openapi.py``), so the document promises what
the service checks. Every failure is a :class:`BadRequest` whose message names the field (a
text past its length with :data:`OVERSIZE` is a :class:`PayloadTooLarge`) and whose ``errors``
list every problem of the body at once, each ``{"field": "fields.eta", "message": "..."}``; a
body that is not declared ``application/json`` is an :class:`UnsupportedMediaType` (415),
whatever it holds.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

import falcon
import jsonschema

from common.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType

# Schema keyword (an OpenAPI extension, ignored by JSON Schema): a string past its maxLength is
# refused as 413 Payload Too Large (content too long to keep), not as malformed input (400).
OVERSIZE = "x-oversize"
# Deepest offset any list accepts, on every service: past it a client filters or sorts instead
# (an offset costs the database a walk over every skipped item).
MAX_OFFSET = 10_000


def obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    """A strict object schema: unknown fields are refused."""
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def string(max_length: int, min_length: int = 0, **extra) -> dict:
    return {"type": "string", "minLength": min_length, "maxLength": max_length, **extra}


def long_string(max_length: int, min_length: int = 0, **extra) -> dict:
    """A text (markdown) whose excess length is a 413, like a body past the size limit."""
    return {**string(max_length, min_length, **extra), OVERSIZE: True}


def integer(minimum: int, maximum: int, default: int | None = None, **extra) -> dict:
    schema = {"type": "integer", "minimum": minimum, "maximum": maximum, **extra}
    return schema if default is None else {**schema, "default": default}


def choice(values, default: str | None = None, **extra) -> dict:
    schema = {"type": "string", "enum": list(values), **extra}
    return schema if default is None else {**schema, "default": default}


BOOLEAN = {"type": "boolean"}
INTEGER = {"type": "integer"}
TEXT = {"type": "string"}
TIMESTAMP = {"type": "string", "format": "date-time"}
ID = {"type": "string", "pattern": "^[0-9a-f]{24}$"}
# Text with a visible character: not empty, not only spaces. (\x1c-\x1f are spaces to Python's
# str.strip, which the services use, but not to every regex engine: named so all agree.)
VISIBLE = r"[^\s\x1c-\x1f]"
OFFSET = integer(0, MAX_OFFSET, 0, description="items to skip (deeper pages: filter or sort instead)")


def shape(properties: dict) -> dict:
    """A response or event object: every field is always present (optional ones as null)."""
    return obj(properties, tuple(properties))


def exactly_one(*names: str) -> dict:
    """What asks an object for exactly one of these fields (``{**obj(...), **exactly_one(...)}``):
    a ``oneOf`` of requirements, which the OpenAPI document shows as it is; given none or
    several, the message names them all."""
    return {"oneOf": [{"required": [name]} for name in names]}


def nullable(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict) -> dict:
    return {"type": "array", "items": items}


# What the people service asks of each service's ``personal_data`` path (common.plugins): one
# user's data, in one workspace or (null) in all.
PERSONAL_DATA_QUERY = obj({"userId": string(200, 1), "workspace": nullable(string(100, 1))}, ("userId",))


@functools.cache
def _regex(pattern: str) -> re.Pattern:
    # JSON Schema patterns are ECMA-262 regexes, where "$" ends the text; in Python it also
    # matches before a final newline, so "acme\n" would pass "^[a-z]+$". Anchor at the very end.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(validator, pattern: str, instance: Any, schema: dict):
    if validator.is_type(instance, "string") and not _regex(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _required(validator, required: list, instance: Any, schema: dict):
    # JSON Schema's own, each error also naming the one field it misses (``missing``).
    if validator.is_type(instance, "object"):
        for name in required:
            if name not in instance:
                error = jsonschema.ValidationError(f"{name!r} is a required property")
                error.missing = name
                yield error


# Draft 2020-12 with ECMA-262 anchors, as every other reader of the OpenAPI document has them.
Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern, "required": _required})

_validators: dict[int, tuple[dict, jsonschema.Draft202012Validator]] = {}


def _validator(schema: dict) -> jsonschema.Draft202012Validator:
    # Schemas are module constants: build each validator once (keeping the schema alive).
    hit = _validators.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = _validators[id(schema)] = (schema, Validator(schema))
    return hit[1]


def check(value: Any, schema: dict) -> dict:
    """Validate ``value`` (or what a lazy body from :func:`media` parses to); raise BadRequest
    whose message names the most relevant offending field (JSON Schema's best match) and whose
    ``errors`` list every problem, that one first. Its status is that one's: a 413 where it is
    a text past an :data:`OVERSIZE` length."""
    if callable(value):
        value = value()
    errors = list(_validator(schema).iter_errors(value))
    if not errors:
        return value
    first = jsonschema.exceptions.best_match(errors)
    problems = _problems(errors, first)
    if first.validator == "maxLength" and first.schema.get(OVERSIZE):
        raise PayloadTooLarge(_describe(first), errors=problems)
    raise BadRequest(_describe(first), errors=problems)


def _problems(errors: list[jsonschema.ValidationError], first: jsonschema.ValidationError) -> list[dict]:
    """Every problem of ``errors``, ``first`` first, as ``{"field", "message"}``. A value of the
    wrong type is that one problem: what else its schema asks of it (a choice, exactly one of
    two fields) is not listed beside it."""
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    # Each error as best_match reads it (into an anyOf's or a oneOf's branches); first is one.
    leaves = [first, *(jsonschema.exceptions.best_match([e]) for e in errors
                       if e.validator == "type" or tuple(e.absolute_path) not in mistyped)]
    problems: list[dict] = []
    for leaf in leaves:
        for problem in _fields(leaf):
            if problem not in problems:
                problems.append(problem)
    return problems


# What each JSON Schema keyword's failure is called in an error's ``code`` (stable: a client
# shows its own words for it; docs/languages.md).
CODES = {
    "required": "required", "additionalProperties": "unknown_field", "type": "wrong_type", "enum": "not_allowed",
    "const": "not_allowed", "maxLength": "too_long", "minLength": "too_short", "pattern": "invalid_format",
    "format": "invalid_format", "maximum": "too_large", "exclusiveMaximum": "too_large", "minimum": "too_small",
    "exclusiveMinimum": "too_small", "maxItems": "too_many", "minItems": "too_few", "uniqueItems": "duplicate",
    "maxProperties": "too_many", "minProperties": "too_few", "multipleOf": "not_allowed",
}


def _fields(error: jsonschema.ValidationError) -> list[dict]:
    """What one error says, field by field: ``field`` is the field's dotted path (``title``,
    ``fields.eta``, ``postIds.2``; ``""`` for the body itself), ``code`` what is wrong with it."""
    names = _exactly_one(error)
    if names is not None:  # about a choice of fields: the first of them names it
        return [{"field": _dotted([*names[1], names[0][0]]), "message": _describe(error), "code": "choose_one"}]
    at = list(error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return [{"field": field, "message": f"unknown field '{field}'", "code": "unknown_field"}
                for field in (_dotted([*at, name]) for name in extra)]
    if error.validator == "required":
        field = _dotted([*at, error.missing])
        return [{"field": field, "message": f"field '{field}' is required", "code": "required"}]
    return [{"field": _dotted(at), "message": _describe(error), "code": CODES.get(error.validator, "invalid")}]


def _dotted(path) -> str:
    return ".".join(str(p) for p in path)


def _describe(error: jsonschema.ValidationError) -> str:
    names = _exactly_one(error)
    if names is not None:
        where = _dotted(names[1])
        listed = " or ".join([", ".join(f"'{n}'" for n in names[0][:-1]), f"'{names[0][-1]}'"])
        return f"give exactly one of {listed}" + (f" in field '{where}'" if where else "")
    path = _dotted(error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown field(s): {', '.join(extra)}"
    if error.validator == "required":
        missing = [r for r in error.validator_value if r not in error.instance]
        return f"field '{missing[0]}' is required"
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        where = f"field '{path}'" if path else "request body"
        return f"{where} must be of type {expected}"
    if error.validator in ("maxLength", "minLength"):
        if error.validator == "minLength" and error.validator_value == 1:
            return f"field '{path}' must not be empty"
        return f"field '{path}' must be {'at most' if error.validator == 'maxLength' else 'at least'} {error.validator_value} characters"
    if error.validator == "maxItems":
        return f"field '{path}' may hold at most {error.validator_value} items"
    if error.validator == "enum":
        allowed = ", ".join(map(str, error.validator_value))
        return f"field '{path}' must be one of: {allowed}"
    if error.validator == "pattern":
        if error.validator_value == VISIBLE:
            return f"field '{path}' must not be blank"
        return f"field '{path}' has an invalid format"
    return f"field '{path}': {error.message}" if path else error.message


JSON_MEDIA_TYPE = "application/json"


def _exactly_one(error: jsonschema.ValidationError) -> tuple[list[str], Any] | None:
    """The fields of an :func:`exactly_one` the error is about (none or several were given), and
    where the object is; None for any other error."""
    while error is not None:
        branches = error.validator_value if error.validator == "oneOf" else None
        if branches and all(set(b) == {"required"} and len(b["required"]) == 1 for b in branches):
            return [b["required"][0] for b in branches], error.absolute_path
        error = error.parent
    return None


def media(req: falcon.Request) -> Callable[[], Any]:
    """The JSON body of ``req``, parsed when the service layer validates it (:func:`check`),
    after it has checked who is asking: a caller without the right learns nothing from the
    body's validation, not even whether it parses. An absent body counts as ``{}``.

    Every body is JSON, declared so: ``Content-Type: application/json`` (any parameters, such
    as a charset; media types are case-insensitive). Any other type, or a body without one, is
    a 415 naming the type it got, never read as fields (a form's fields would otherwise be
    validated as if the client had sent JSON, and the answer would name a missing field)."""

    read: list = []  # the parsed body, once: the stream is read only once

    def body() -> Any:
        if not read:
            read.append(_json_body(req))
        return read[0]

    return body


def _json_body(req: falcon.Request) -> Any:
    declared = (req.content_type or "").strip()
    if not declared and not req.content_length:
        return {}  # no body at all (a POST that needs none, an empty PATCH)
    if _media_type(declared) != JSON_MEDIA_TYPE:
        given = f"Content-Type {declared!r}" if declared else "no Content-Type"
        raise UnsupportedMediaType(f"request body must be {JSON_MEDIA_TYPE} (with or without a charset); got {given}")
    # The app's JSON handler, whatever the spelling of the type (it reads UTF-8, as JSON is).
    handler = req.options.media_handlers[JSON_MEDIA_TYPE]
    try:
        return handler.deserialize(req.bounded_stream, declared, req.content_length)
    except falcon.MediaNotFoundError:
        return {}


def _media_type(content_type: str | None) -> str:
    """The type/subtype of a Content-Type, without its parameters, in lower case."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def param(req: falcon.Request, name: str, schema: dict, required: bool = False):
    """The query parameter ``name`` checked against ``schema`` (``type`` integer or string, with
    the bounds, ``enum`` and lengths the document shows): its ``default`` when absent. A value
    given twice, or empty where the schema asks for a number or a choice, is a 400 whose one
    entry of ``errors`` has the parameter's name as ``field`` (each is read on its own)."""
    raw = req.params.get(name)
    if raw is None:
        if required:
            raise _refused(name, "is required", "required")
        return schema.get("default")
    if not isinstance(raw, str):
        raise _refused(name, "must be given once", "duplicate")
    if schema.get("type") == "integer":
        # Digits only: Python's int() would also take " 7", "+7", "7_0" and other scripts' digits.
        if not _INTEGER.fullmatch(raw):
            raise _refused(name, "must be an integer", "wrong_type")
        value = int(raw)
        if not schema["minimum"] <= value <= schema["maximum"]:
            raise _refused(name, f"must be between {schema['minimum']} and {schema['maximum']}", "out_of_range")
        return value
    if "enum" in schema and raw not in schema["enum"]:
        raise _refused(name, f"must be one of: {', '.join(schema['enum'])}", "not_allowed")
    if len(raw) < schema.get("minLength", 0):
        raise _refused(name, "must not be empty", "too_short")
    if len(raw) > schema.get("maxLength", len(raw)):
        raise _refused(name, f"must be at most {schema['maxLength']} characters", "too_long")
    if "pattern" in schema and not _regex(schema["pattern"]).search(raw):
        raise _refused(name, "must not be blank" if schema["pattern"] == VISIBLE else "has an invalid format", "invalid_format")
    return raw


def _refused(name: str, says: str, code: str) -> BadRequest:
    message = f"query parameter '{name}' {says}"
    return BadRequest(message, errors=[{"field": name, "message": message, "code": code}])


_INTEGER = re.compile(r"-?[0-9]+")


def page_params(req: falcon.Request, limit: dict) -> tuple[int, int]:
    """``(limit, offset)`` of a paged list; out of range is a 400, never clamped."""
    return param(req, "limit", limit), param(req, "offset", OFFSET)
