"""Helpers the posts service's tests share (the fixtures are in conftest.py): a board to call
through the platform, callers and workspaces for the service layer in process, the documented
list shapes, and what a query plan shows."""

from __future__ import annotations

import json
import random
import time
import uuid

import requests

from common import auth
from common.config import load_settings
from common.kafka import make_consumer
from posts import contract, text
from posts.reads import Filters


class Board:
    """A workspace with one board, and shortcuts for the calls tests repeat."""

    def __init__(self, workspace, slug: str = "features"):
        self.ws = workspace
        self.api = workspace.api
        self.slug = slug
        self.board = workspace.board(slug, "Feature requests")

    @property
    def path(self) -> str:
        return f"{self.ws.path}/posts"

    def post(self, title: str = "A post", content: str = "Some **markdown**", key=None, user=None, headers=None, board=None):
        kw = {"key": key} if key else {"user": user} if user else {"key": self.ws.key}
        r = self.api.post(self.path, json={"boardSlug": board or self.slug, "title": title, "content": content}, headers=headers, **kw)
        assert r.status_code == 201, r.text
        return r.json()

    def user(self, name: str | None = None) -> str:
        return self.ws.user_token(name or f"u-{uuid.uuid4().hex[:8]}")

    def vote(self, post_id: str, **kw):
        return self.api.post(f"{self.path}/{post_id}/vote", **kw)

    def get(self, post_id: str, **kw):
        return self.api.get(f"{self.path}/{post_id}", **kw)

    def manager_get(self, post_id: str) -> dict:
        r = self.get(post_id, key=self.ws.key)
        assert r.status_code == 200, r.text
        return r.json()


def anon(anon_id: str | None = None) -> dict:
    return {"X-Feedback-Anonymous-Id": anon_id or uuid.uuid4().hex}


# -- in process (the service layer against the real local database) ------------------------------


def manager(slug: str) -> auth.Caller:
    """A manager of ``slug``, for tests that call the service layer in process."""
    return auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="k1")


def user(slug: str, name: str | None = None) -> auth.Caller:
    """A signed-in end user of ``slug`` (a new one unless ``name`` is given)."""
    return auth.Caller(kind=auth.USER, workspace=slug, user_id=f"sso:{name or uuid.uuid4().hex[:8]}")


PERSON_ID = "person:5f0c3a9e2b7d4c1a8e6f0b2d"
OPERATOR = auth.Caller(kind=auth.ADMIN)


def person(slug: str, name: str = "Ada Lovelace") -> auth.Caller:
    """A signed-in team member of ``slug`` (an owner), as the gateway forwards a person the
    people service signed in."""
    return auth.Caller(kind=auth.MANAGER, workspace=slug, user_id=PERSON_ID, name=name, email="ada@example.com", role=auth.OWNER)


def signed(stack, method: str, path: str, caller: auth.Caller, body=None) -> requests.Response:
    """One request straight to the posts service, signed as the gateway signs ``caller``."""
    payload = json.dumps(body).encode() if body is not None else None
    bare, _, query = path.partition("?")
    headers = {**auth.signed_headers(stack.internal_secret, "posts", method, bare, query, payload, caller), "Content-Type": "application/json"}
    return requests.request(method, stack.service_url("posts") + path, data=payload, headers=headers, timeout=30)


def published(stack, slug: str, wanted: set[str], timeout: float = 60) -> dict[str, list[dict]]:
    """The events of ``slug`` on feedback.posts by type, read from the start until every
    ``wanted`` type has come (or ``timeout`` has passed: the caller's assertion says which not)."""
    consumer = make_consumer(load_settings({"KAFKA_BOOTSTRAP_SERVERS": stack.kafka_bootstrap}), f"test-{uuid.uuid4().hex}", ["feedback.posts"])
    by_type: dict[str, list[dict]] = {}
    deadline = time.monotonic() + timeout
    try:
        while wanted - set(by_type) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                for event in (json.loads(r.value) for r in records):
                    if event["workspace"] == slug:
                        by_type.setdefault(event["type"], []).append(event["data"])
    finally:
        consumer.close()
    return by_type


BOARDS = [{"id": f"b{i}", "name": f"Board {i}", "slug": f"board-{i}"} for i in range(3)]
STATUSES = ["open", "planned", "in-progress", "complete"]
WORDS = ["export", "slack", "dark", "login", "mobile", "search"]


def new_workspace(context, prefix: str) -> str:
    """A new workspace with ``BOARDS`` and ``STATUSES``, applied to the read model; its slug."""
    slug = f"{prefix}-{uuid.uuid4().hex[:8]}"
    context.workspaces.apply({
        "slug": slug, "name": prefix, "version": 1, "boards": BOARDS,
        "statuses": [{"slug": s, "name": s, "color": "#000000", "order": i, "roadmap": True} for i, s in enumerate(STATUSES)],
        "defaultStatus": "open", "anonSubmit": False, "anonVote": False, "anonComment": False,
    })
    return slug


def shapes_of_lists(rng: random.Random) -> list[tuple[Filters, str, int, int]]:
    """Every documented list shape (docs/services/posts.md, "Lists"): each sort, for everyone and
    for managers, unfiltered and by board, status, word, board and status, tags and fields
    (``TRIAGE``), and (managers) each moderation state; each with a page drawn at random."""
    found = []
    for sort in contract.SORTS:
        for manager_ in (False, True):
            filters = [Filters(), Filters(board="b1"), Filters(status="planned"), Filters(words=tuple(text.word_terms("slack"))),
                       Filters(board="b2", status="open"), Filters(facets=("tag:bug",)),
                       Filters(facets=("field:platform=ios", "tag:ux")), Filters(board="b1", facets=("field:blocker=true",))]
            if manager_:
                filters += [Filters(moderation=m) for m in contract.MODERATION_STATES]
            for f in filters:
                offset, limit = rng.choice([(0, 20), (0, 5), (3, 7), (10, 100)])
                found.append((Filters(manager_, f.board, f.status, f.moderation, f.words, f.facets), sort, limit, offset))
    return found


# -- query plans (on a real MongoDB) -------------------------------------------------------------


def stages(plan: dict) -> set[str]:
    found = {plan.get("stage", "")}
    for key in ("inputStage", "queryPlan"):
        if isinstance(plan.get(key), dict):
            found |= stages(plan[key])
    for child in plan.get("inputStages", []):
        found |= stages(child)
    return found


def winning(cursor) -> set[str]:
    """The stages of the plan MongoDB chose for ``cursor`` (COLLSCAN, IXSCAN, SORT, ...)."""
    explained = cursor.explain()
    planner = explained.get("queryPlanner", explained)
    return stages(planner["winningPlan"])
