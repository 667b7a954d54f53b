"""Request validation: JSON bodies against JSON Schema (jsonschema), query parameters by type.

Every failure is a :class:`BadRequest` whose message names the field.
"""

from __future__ import annotations

from typing import Any, Callable

import falcon
import jsonschema

from common.errors import BadRequest


def obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    """A strict object schema: unknown fields are refused."""
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def string(max_length: int, min_length: int = 0, **extra) -> dict:
    return {"type": "string", "minLength": min_length, "maxLength": max_length, **extra}


BOOLEAN = {"type": "boolean"}
INTEGER = {"type": "integer"}
TEXT = {"type": "string"}
TIMESTAMP = {"type": "string", "format": "date-time"}
ID = {"type": "string", "pattern": "^[0-9a-f]{24}$"}


def shape(properties: dict) -> dict:
    """A response or event object: every field is always present (optional ones as null)."""
    return obj(properties, tuple(properties))


def nullable(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict) -> dict:
    return {"type": "array", "items": items}


_validators: dict[int, tuple[dict, jsonschema.Draft202012Validator]] = {}


def _validator(schema: dict) -> jsonschema.Draft202012Validator:
    # Schemas are module constants: build each validator once (keeping the schema alive).
    hit = _validators.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = _validators[id(schema)] = (schema, jsonschema.Draft202012Validator(schema))
    return hit[1]


def check(value: Any, schema: dict) -> dict:
    """Validate ``value`` (or what a lazy body from :func:`media` parses to); raise BadRequest
    naming the first offending field."""
    if callable(value):
        value = value()
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(value))
    if error is None:
        return value
    raise BadRequest(_describe(error))


def _describe(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
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
        return f"field '{path}' has an invalid format"
    return f"field '{path}': {error.message}" if path else error.message


def media(req: falcon.Request) -> Callable[[], Any]:
    """The JSON body of ``req``, parsed when the service layer validates it (:func:`check`),
    after it has checked who is asking: a caller without the right learns nothing from the
    body's validation, not even whether it parses. An absent body counts as ``{}``."""
    return lambda: req.get_media(default_when_empty={})


def body(req: falcon.Request, schema: dict) -> dict:
    """Return the validated JSON body of ``req`` (an absent body counts as ``{}``)."""
    data = req.get_media(default_when_empty={})
    return check(data, schema)


def int_param(req: falcon.Request, name: str, default: int, minimum: int, maximum: int) -> int:
    raw = req.get_param(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"query parameter '{name}' must be an integer") from None
    if not minimum <= value <= maximum:
        raise BadRequest(f"query parameter '{name}' must be between {minimum} and {maximum}")
    return value


# Deepest offset any list accepts, on every service: past it a client filters or sorts instead
# (an offset costs the database a walk over every skipped item).
MAX_OFFSET = 10_000


def page_params(req: falcon.Request, default_limit: int, max_limit: int) -> tuple[int, int]:
    """``(limit, offset)`` of a paged list; out of range is a 400, never clamped."""
    return int_param(req, "limit", default_limit, 1, max_limit), int_param(req, "offset", 0, 0, MAX_OFFSET)


def choice_param(req: falcon.Request, name: str, default: str, choices: tuple[str, ...]) -> str:
    value = req.get_param(name) or default
    if value not in choices:
        raise BadRequest(f"query parameter '{name}' must be one of: {', '.join(c for c in choices if c)}")
    return value
