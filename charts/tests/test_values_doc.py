"""values.yaml documents every value, and docs/deployment.md's table says the same."""

import re

import helm_python

from .chartkit import CHART, REPO
from .values_doc import VALUES, keys, table, undocumented


def test_every_value_has_a_comment_above_it():
    assert undocumented(VALUES.read_text()) == []


def test_deployment_guide_has_the_current_values_table():
    doc = (REPO / "docs" / "deployment.md").read_text()
    current = re.search(r"<!-- values-table -->\n(.*)\n<!-- /values-table -->", doc, re.S).group(1)
    assert current == table(VALUES.read_text()), "regenerate it: .venv/bin/python charts/tests/values_doc.py"


def test_every_documented_value_is_in_the_schema():
    schema = helm_python.Chart.load(CHART).schema
    documented = [k.path for k in keys(VALUES.read_text()) if k.documented]
    for key in keys(VALUES.read_text()):
        node, parts = schema, key.path.split(".")
        if parts[0] in ("mongodb", "kafka") or any(key.path.startswith(d + ".") for d in documented):
            continue  # passed through to the subcharts, or inside a value (an object)
        for part in parts:
            node = next((o for o in node["oneOf"] if "$ref" in o), node) if "oneOf" in node else node
            if "$ref" in node:
                node = schema["definitions"][node["$ref"].rsplit("/", 1)[1]]
            props = node.get("properties", {})
            if part in props:
                node = props[part]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]  # a map (services, workers)
            else:
                raise AssertionError(f"{key.path}: '{part}' is not in values.schema.json")
