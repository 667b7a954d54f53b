"""Triage: a workspace's tags, custom fields and score formula, and what they make of a post
(docs/services/posts.md, "Triage and scores"). Pure logic: no database.

A workspace's settings (``GET``/``PUT /v1/workspaces/{slug}/triage``) name its tags (slug,
name, color), its typed custom fields (each public or internal) and the formula of its posts'
score. A post keeps the tags and field values a manager gave it; from them and the settings
this module computes what lists filter and sort on:

- ``facets``: the post's filterable values as strings (``tag:<slug>``, ``owner:<userId>``,
  ``field:<key>=<value>`` for select, multi-select and checkbox fields), one array both read
  engines match a filter against;
- ``score``: the formula over ``votes``, ``revenue`` (the spend behind the votes, in the
  workspace's currency) and the number and checkbox fields.

A formula is arithmetic only (``+ - * /``, parentheses, numbers, ``min(...)``, ``max(...)``),
parsed with :mod:`ast` and evaluated by walking it: no code runs. It is checked when saved:
every name must be ``votes``, ``revenue`` or a number or checkbox field, and no divisor may be
able to be zero (the range of each value is known: votes and revenue are never negative, a
number field keeps its ``min``/``max``, a post without a value counts as the field's ``min``,
or 0 without one).
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from datetime import date
from typing import Callable

from common.errors import BadRequest, NotFound
from posts.contract import FIELD_TYPES

TEXT, NUMBER, SELECT, MULTISELECT, DATE, CHECKBOX = FIELD_TYPES
FILTERABLE = (SELECT, MULTISELECT, CHECKBOX)  # the types lists filter on (field.<key>=<value>)
SCORED = (NUMBER, CHECKBOX)  # the types a formula may name
VOTES, REVENUE = "votes", "revenue"
DEFAULT_FORMULA = VOTES  # a workspace that set none: the score is the vote count
TEXT_VALUE_MAX = 1000
# A score is kept within this (a formula of huge fields could overflow a float's precision).
SCORE_LIMIT = 1e15

TAG_FACET, OWNER_FACET, FIELD_FACET = "tag:", "owner:", "field:"

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_FUNCTIONS = {"min": min, "max": max}
Values = dict[str, float]


# -- formulas -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Formula:
    text: str
    evaluate: Callable[[Values], float]
    names: frozenset[str]

    def score(self, values: Values) -> float:
        result = self.evaluate(values)
        if math.isnan(result):
            return 0.0
        return max(-SCORE_LIMIT, min(SCORE_LIMIT, result))


@dataclass(frozen=True)
class Range:
    """The values an expression can take: [low, high] (infinite ends allowed)."""

    low: float
    high: float

    def has_zero(self) -> bool:
        return self.low <= 0 <= self.high


def _times(a: float, b: float) -> float:
    return 0.0 if a == 0 or b == 0 else a * b  # 0 x inf is 0 here: a bound, not a value


def _range_of(op: type, a: Range, b: Range) -> Range:
    if op is ast.Add:
        return Range(a.low + b.low, a.high + b.high)
    if op is ast.Sub:
        return Range(a.low - b.high, a.high - b.low)
    if op is ast.Mult:
        ends = [_times(x, y) for x in (a.low, a.high) for y in (b.low, b.high)]
        return Range(min(ends), max(ends))
    # Division by a range without zero: the ends of the quotient are among these.
    ends = [x / y if math.isfinite(y) else 0.0 for x in (a.low, a.high) for y in (b.low, b.high)]
    ends = [e for e in ends if not math.isnan(e)]
    return Range(min(ends), max(ends)) if ends else Range(-math.inf, math.inf)


def compile_formula(text: str, ranges: dict[str, Range]) -> Formula:
    """The formula ``text`` over the names of ``ranges``; 400 for anything else, or for a
    division by something that can be zero."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a NUL character
        raise BadRequest(f"field 'scoreFormula': cannot read '{text}': use numbers, names, + - * / ( ) and min(), max()") from None
    names: set[str] = set()

    def build(node: ast.AST) -> tuple[Callable[[Values], float], Range]:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            value = float(node.value)
            return (lambda _: value), Range(value, value)
        if isinstance(node, ast.Name):
            if node.id not in ranges:
                raise BadRequest(f"field 'scoreFormula': unknown name '{node.id}': use votes, revenue, or a number or checkbox field's key")
            names.add(node.id)
            key = node.id
            return (lambda values: values.get(key, 0.0)), ranges[key]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner, r = build(node.operand)
            if isinstance(node.op, ast.UAdd):
                return inner, r
            return (lambda values: -inner(values)), Range(-r.high, -r.low)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            (left, a), (right, b) = build(node.left), build(node.right)
            if isinstance(node.op, ast.Div) and b.has_zero():
                raise BadRequest(f"field 'scoreFormula': '{ast.unparse(node.right)}' can be 0, and the formula divides by it: "
                                 "give the field a minimum above 0, or divide by max(..., 1)")
            apply = _BINARY[type(node.op)]
            return (lambda values: apply(left(values), right(values))), _range_of(type(node.op), a, b)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
                and len(node.args) >= 2 and not node.keywords):
            parts = [build(arg) for arg in node.args]
            pick = _FUNCTIONS[node.func.id]
            funcs = [f for f, _ in parts]
            r = Range(pick(p.low for _, p in parts), pick(p.high for _, p in parts))
            return (lambda values: pick(f(values) for f in funcs)), r
        raise BadRequest(f"field 'scoreFormula': '{ast.unparse(node)}' is not allowed: use numbers, names, + - * / ( ) "
                         "and min(a, b, ...), max(a, b, ...)")

    try:
        evaluate, _ = build(tree.body)
    except (RecursionError, OverflowError):  # nested past reason, or a number past a float's range
        raise BadRequest("field 'scoreFormula': too deeply nested, or a number too large") from None
    return Formula(text=text.strip(), evaluate=evaluate, names=frozenset(names))


# -- settings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """A workspace's triage settings as stored (``version`` 0: none saved yet)."""

    version: int = 0
    tags: tuple[dict, ...] = ()
    fields: tuple[dict, ...] = ()
    formula_text: str | None = None
    formula: Formula = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "formula", compile_formula(self.formula_text or DEFAULT_FORMULA, self.ranges()))

    @classmethod
    def from_doc(cls, doc: dict | None) -> "Settings":
        if not doc:
            return cls()
        return cls(version=doc.get("version", 0), tags=tuple(doc.get("tags", ())), fields=tuple(doc.get("fields", ())),
                   formula_text=doc.get("scoreFormula"))

    def ranges(self) -> dict[str, Range]:
        ranges = {VOTES: Range(0, math.inf), REVENUE: Range(0, math.inf)}
        for f in self.fields:
            if f["type"] == CHECKBOX:
                ranges[f["key"]] = Range(0, 1)
            elif f["type"] == NUMBER:
                low, high = f.get("min"), f.get("max")
                # A post without a value counts as the minimum, or 0 without one.
                ranges[f["key"]] = Range(-math.inf if low is None else low, math.inf if high is None else high)
                if low is None:
                    ranges[f["key"]] = Range(min(0.0, ranges[f["key"]].low), max(0.0, ranges[f["key"]].high))
        return ranges

    def field(self, key: str) -> dict | None:
        return next((f for f in self.fields if f["key"] == key), None)

    def tag(self, slug: str) -> dict | None:
        return next((t for t in self.tags if t["slug"] == slug), None)

    def shown(self, team: bool) -> dict:
        """The settings as the caller may see them: end users see the tags and public fields
        (what the board shows); the team every field and the formula."""
        shown = {"tags": [dict(t) for t in self.tags],
                 "fields": [dict(f) for f in self.fields if team or f.get("public")]}
        if team:
            shown["scoreFormula"] = self.formula_text
            shown["version"] = self.version
        return shown

    # -- a post ---------------------------------------------------------------------------

    def values(self, doc: dict) -> Values:
        """What the formula reads of a post."""
        values = {VOTES: float(doc.get("voteCount", 0)), REVENUE: doc.get("revenueCents", 0) / 100}
        given = doc.get("fields") or {}
        for f in self.fields:
            if f["key"] not in self.formula.names:
                continue
            value = given.get(f["key"])
            if f["type"] == CHECKBOX:
                values[f["key"]] = 1.0 if value else 0.0
            else:
                values[f["key"]] = float(value) if value is not None else float(f.get("min") or 0)
        return values

    def derived(self, doc: dict) -> dict:
        """The fields of a post computed from the rest: its score, facets and the version of
        the settings they follow (to $set with any change of votes, revenue, tags or fields)."""
        return {"score": self.formula.score(self.values(doc)), "facets": self.facets(doc), "scoreVersion": self.version}

    def facets(self, doc: dict) -> list[str]:
        facets = [TAG_FACET + t for t in doc.get("tags") or () if self.tag(t) is not None]
        owner = doc.get("owner")
        if owner:
            facets.append(OWNER_FACET + owner["id"])
        given = doc.get("fields") or {}
        for f in self.fields:
            value = given.get(f["key"])
            if f["type"] not in FILTERABLE or value is None:
                continue
            for v in value if isinstance(value, list) else [value]:
                facets.append(field_facet(f["key"], _facet_value(v)))
        return facets

    def conform(self, doc: dict) -> dict:
        """A post's tags and field values as these settings allow them (a tag or field removed,
        an option dropped, a range narrowed: the value goes), for the pass that follows a
        change of the settings."""
        tags = [t for t in doc.get("tags") or () if self.tag(t) is not None]
        fields = {}
        for key, value in (doc.get("fields") or {}).items():
            spec = self.field(key)
            if spec is not None and _fits(spec, value):
                fields[key] = value
        return {"tags": tags, "fields": fields}

    def shape(self, doc: dict, team: bool) -> dict:
        """The triage part of a Post as the caller may see it: tags and ETA for everyone, the
        public fields for everyone and the internal ones for the team; owner and score for the
        team only."""
        fields = {k: v for k, v in (doc.get("fields") or {}).items()
                  if (spec := self.field(k)) is not None and (team or spec.get("public"))}
        shown = {"tags": [dict(tag) for t in doc.get("tags") or () if (tag := self.tag(t)) is not None],
                 "eta": doc.get("eta"), "fields": fields}
        if team:
            shown["owner"] = doc.get("owner")
            shown["score"] = round(doc["score"], 4) if doc.get("score") is not None else float(doc.get("voteCount", 0))
        return shown


def field_facet(key: str, value: str) -> str:
    return f"{FIELD_FACET}{key}={value}"


def _facet_value(value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


# -- checking what a manager saves ----------------------------------------------------------


def check_settings(body: dict) -> dict:
    """The stored form of valid settings (``body`` passed the JSON schema); 400 for what the
    schema cannot say: repeated slugs or keys, options of the wrong types, a min above a max,
    a formula that cannot be computed."""
    tags = body.get("tags", [])
    fields = body.get("fields", [])
    _unique([t["slug"] for t in tags], "tags", "slug")
    _unique([f["key"] for f in fields], "fields", "key")
    stored_fields = []
    for i, f in enumerate(fields):
        where = f"fields.{i}"
        if f["key"] in (VOTES, REVENUE):
            raise BadRequest(f"field '{where}.key': '{f['key']}' is the formula's own name; choose another key")
        options = f.get("options")
        if f["type"] in (SELECT, MULTISELECT):
            if not options:
                raise BadRequest(f"field '{where}.options': a {f['type']} field needs its options")
            _unique(options, f"{where}.options", None)
        elif options is not None:
            raise BadRequest(f"field '{where}.options': only select and multiselect fields have options")
        if ("min" in f or "max" in f) and f["type"] != NUMBER:
            raise BadRequest(f"field '{where}': only number fields have a min and a max")
        if f.get("min") is not None and f.get("max") is not None and f["min"] > f["max"]:
            raise BadRequest(f"field '{where}': min {f['min']} is above max {f['max']}")
        stored_fields.append({"key": f["key"], "name": f["name"], "type": f["type"], "public": bool(f.get("public", False)),
                              **({"options": list(options)} if options else {}),
                              **{k: f[k] for k in ("min", "max") if f.get(k) is not None}})
    stored = {"tags": [{"slug": t["slug"], "name": t["name"], "color": t["color"]} for t in tags],
              "fields": stored_fields, "scoreFormula": (body.get("scoreFormula") or None)}
    Settings(tags=tuple(stored["tags"]), fields=tuple(stored["fields"]), formula_text=stored["scoreFormula"])  # the formula compiles
    return stored


def _unique(values: list, where: str, what: str | None) -> None:
    seen = set()
    for value in values:
        if value in seen:
            raise BadRequest(f"field '{where}': '{value}' appears twice" + (f" (each {what} once)" if what else ""))
        seen.add(value)


def check_values(settings: Settings, given: dict) -> dict:
    """Field values a manager sets on a post (``{key: value}``, null clears one); 400 naming
    the first that does not fit its field, 404 for a field the workspace does not have."""
    checked = {}
    for key, value in given.items():
        spec = settings.field(key)
        if spec is None:  # named but not there: 404, as an unknown status is
            raise NotFound(f"field 'fields.{key}': this workspace has no custom field '{key}'")
        if value is not None and not _fits(spec, value):
            raise BadRequest(f"field 'fields.{key}': {_expected(spec)}")
        checked[key] = value
    return checked


def check_tags(settings: Settings, tags: list[str]) -> list[str]:
    for slug in tags:
        if settings.tag(slug) is None:
            raise NotFound(f"field 'tags': this workspace has no tag '{slug}'")
    return list(dict.fromkeys(tags))


def _fits(spec: dict, value) -> bool:
    kind = spec["type"]
    if kind == TEXT:
        return isinstance(value, str) and 0 < len(value) <= TEXT_VALUE_MAX
    if kind == NUMBER:
        return (type(value) in (int, float) and math.isfinite(value) and value >= spec.get("min", -math.inf)
                and value <= spec.get("max", math.inf))
    if kind == SELECT:
        return isinstance(value, str) and value in spec["options"]
    if kind == MULTISELECT:
        return (isinstance(value, list) and all(isinstance(v, str) and v in spec["options"] for v in value)
                and len(set(value)) == len(value))
    if kind == CHECKBOX:
        return isinstance(value, bool)
    if kind == DATE:
        try:
            return isinstance(value, str) and len(value) == 10 and date.fromisoformat(value) is not None
        except ValueError:
            return False
    return False


def _expected(spec: dict) -> str:
    kind = spec["type"]
    if kind == NUMBER:
        bounds = [f"at least {spec['min']}" if "min" in spec else "", f"at most {spec['max']}" if "max" in spec else ""]
        return "must be a number" + (" " + " and ".join(b for b in bounds if b) if any(bounds) else "")
    if kind == SELECT:
        return f"must be one of {', '.join(spec['options'])}"
    if kind == MULTISELECT:
        return f"must be a list of distinct options among {', '.join(spec['options'])}"
    if kind == CHECKBOX:
        return "must be true or false"
    if kind == DATE:
        return "must be a date, YYYY-MM-DD"
    return f"must be text of at most {TEXT_VALUE_MAX} characters"


def parse_filter(settings: Settings, key: str, value: str, team: bool) -> str:
    """The facet of a list's ``field.<key>=<value>`` filter; 400 for a field the caller may not
    filter on (an internal one, for end users: as if it did not exist)."""
    spec = settings.field(key)
    if spec is None or not (team or spec.get("public")):
        raise BadRequest(f"query parameter 'field.{key}': this workspace has no custom field '{key}'")
    if spec["type"] not in FILTERABLE:
        raise BadRequest(f"query parameter 'field.{key}': lists filter on select, multiselect and checkbox fields only")
    if spec["type"] == CHECKBOX and value not in ("true", "false"):
        raise BadRequest(f"query parameter 'field.{key}': must be true or false")
    return field_facet(key, value)
