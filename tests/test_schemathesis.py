"""Property-based fuzzing of the whole public API from its own OpenAPI document.

schemathesis generates requests for every documented operation (as a manager of one
workspace) and checks: no 5xx, every response matches its documented schema (so every
error is {"error": string}), and content types match.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testkit import create_workspace

CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance,content_type_conformance"


def pin_slug(doc: dict, slug: str) -> dict:
    """Point every {slug} at the test's workspace so requests reach real data."""
    def visit(node):
        if isinstance(node, dict):
            if node.get("in") == "path" and node.get("name") == "slug":
                node["schema"] = {"type": "string", "enum": [slug]}
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(doc)
    return doc


@pytest.mark.reliability
def test_fuzz_every_operation(api, admin_token, stack, tmp_path: Path):
    ws = create_workspace(api, admin_token)
    ws.board("features", "Features")
    schema = tmp_path / "openapi.json"
    schema.write_text(json.dumps(pin_slug(api.get("/openapi.json").json(), ws.slug)))
    cli = Path(sys.executable).with_name("schemathesis")
    result = subprocess.run(
        [str(cli), "run", str(schema), "--url", stack.url, "-H", f"Authorization: Bearer {ws.key}",
         "--checks", CHECKS, "--max-examples", "15", "--phases", "examples,coverage,fuzzing",
         "--exclude-path", "/v1/workspaces", "--seed", "1", "--max-time", "90", "--request-timeout", "10",
         "--warnings", "off", "--no-color"],
        capture_output=True, text=True, timeout=600,
    )
    (Path(stack.log_dir or tmp_path) / "schemathesis.txt").write_text(result.stdout + result.stderr)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
