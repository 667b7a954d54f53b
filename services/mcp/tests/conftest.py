"""Fixtures of the MCP tests: a workspace with a board, and one API key per role."""

from __future__ import annotations

import pytest


@pytest.fixture
def keys(api, workspace) -> dict[str, str]:
    """``{role: key}`` of a fresh workspace that has a ``features`` board."""
    workspace.board()
    made = {"manager": workspace.key}
    for role in ("write", "read"):
        r = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": f"agent-{role}", "role": role})
        assert r.status_code == 201, r.text
        made[role] = r.json()["key"]
    return made
