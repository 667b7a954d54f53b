"""Fixtures of the posts service's tests."""

import uuid

import pytest

from .helpers import Board


@pytest.fixture
def board(workspace) -> Board:
    return Board(workspace)


# -- in process (the service layer against the real local database) ------------------------------


@pytest.fixture(scope="session")
def context(service_context):
    context = service_context("posts")
    # In process, a workspace's query index is built by the read that misses it, so what a
    # service-layer test reads comes from the engine it configures; the background builds,
    # and the reads answered meanwhile, have tests of their own (test_reads.py).
    context.reads.cache.background = False
    return context


@pytest.fixture
def slug(context):
    slug = f"unit-{uuid.uuid4().hex[:10]}"
    context.workspaces.apply(
        {
            "slug": slug,
            "name": "Unit",
            "version": 1,
            "boards": [{"id": "b1", "name": "Features", "slug": "features"}],
            "statuses": [
                {"slug": "open", "name": "Open", "color": "#64748b", "order": 0, "roadmap": True},
                {"slug": "planned", "name": "Planned", "color": "#8b5cf6", "order": 1, "roadmap": True},
            ],
            "defaultStatus": "open",
            "anonSubmit": False,
            "anonVote": False,
            "anonComment": False,
        }
    )
    return slug
