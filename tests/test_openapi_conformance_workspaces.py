"""The OpenAPI document and the API agree: the workspaces service's operations (the run is split so
parallel test processes share it; the rules and the other operations are in
test_openapi_conformance.py)."""

from __future__ import annotations

from .test_openapi_conformance import run_conformance


def test_every_workspaces_operation_answers_as_documented(api, admin_token, stack):
    run_conformance(api, admin_token, stack, "workspaces")
