"""The platform's test kit: fixtures (``testkit.fixtures``, a pytest plugin) and helpers."""

from testkit.api import Api, Workspace, assert_error, create_workspace, unique_slug, wait_for

__all__ = ["Api", "Workspace", "assert_error", "create_workspace", "unique_slug", "wait_for"]
