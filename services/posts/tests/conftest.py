"""Fixtures of the posts service's tests."""

import pytest

from .helpers import Board


@pytest.fixture
def board(workspace) -> Board:
    return Board(workspace)
