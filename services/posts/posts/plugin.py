"""The posts plugin: what the platform needs to route to, initialise and run the service.

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from common.config import Settings
from common.plugins import Budget, Route, ServiceContext, ServiceSpec, hookimpl
from posts import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from posts.config import PostsConfig
    from posts.readmodel import Workspaces
    from posts.service import PostService

R = "posts.resources:"
TRIAGE_SAVES = Budget("triage-saves", quota=6, window=60)
ROUTES = [
    Route("/workspaces/{slug}/posts", R + "PostList", ("GET", "POST"), limits={"POST": "write"}),
    Route("/workspaces/{slug}/posts/search", R + "PostSearch", ("GET",), limits={"GET": "search"}),
    # A whole-board aggregation: budgeted like a search, which a visitor could flood too.
    Route("/workspaces/{slug}/posts/stats", R + "PostStats", ("GET",), limits={"GET": "search"}),
    Route("/workspaces/{slug}/posts/{postId}", R + "PostItem", ("GET", "PATCH")),
    Route("/workspaces/{slug}/posts/{postId}/merge", R + "Merge", ("POST",)),
    Route("/workspaces/{slug}/posts/{postId}/unmerge", R + "Unmerge", ("POST",)),
    Route("/workspaces/{slug}/posts/{postId}/vote", R + "Vote", ("POST", "DELETE"), limits={"POST": "write", "DELETE": "write"}),
    Route("/workspaces/{slug}/posts/{postId}/votes", R + "VoteList", ("GET", "POST"), limits={"POST": "write"}),
    Route("/workspaces/{slug}/posts/{postId}/comments", R + "CommentList", ("GET", "POST"), limits={"POST": "write"}),
    Route("/workspaces/{slug}/roadmap", R + "Roadmap", ("GET",)),
    # A save rescores every post of the workspace (posts.scores): a handful a minute for the
    # whole team, where a manager key's own budget would let it save 1,200 times.
    Route("/workspaces/{slug}/triage", R + "Triage", ("GET", "PUT"), budgets={"PUT": TRIAGE_SAVES}),
    Route("/workspaces/{slug}/suggestions", R + "SuggestionList", ("GET",)),
    Route("/workspaces/{slug}/suggestions/{suggestionId}/accept", R + "SuggestionAccept", ("POST",)),
    Route("/workspaces/{slug}/suggestions/{suggestionId}/dismiss", R + "SuggestionDismiss", ("POST",)),
]
INTERNAL_ROUTES = [
    Route("/internal/posts/lookup", R + "Lookup", ("POST",)),
    # Who a changelog entry ships to (the notifications service): asked of the owner, so a vote
    # made a moment before the entry counts however far its event is behind.
    Route("/internal/posts/voters", R + "Voters", ("POST",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: PostsConfig
    workspaces: Workspaces  # the in-memory read model
    service: PostService

    def start_api(self) -> None:
        self.workspaces.start_polling()  # mirror the read model in memory (API processes only)
        self.service.reads.start()
        threading.Thread(target=self.service.warm_up, name="model-warm-up", daemon=True).start()
        threading.Thread(target=self.service.backfill_last_comments, name="last-comments-backfill", daemon=True).start()

    def readiness(self) -> dict[str, Callable[[], None]]:
        return {"query-indexes": self._indexes_warm}

    def _indexes_warm(self) -> None:
        if not self.service.reads.ready():
            raise RuntimeError("warming up")  # reported as "unreachable: RuntimeError"


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.person_directory import PersonDirectory
    from posts.config import load_config
    from posts.embeddings import LazyEmbedder
    from posts.models import ALIAS
    from posts.readmodel import Workspaces
    from posts.repository import PostRepository
    from posts.service import PostService

    config = load_config()
    store = Store(settings, ALIAS)
    repo = PostRepository(store)
    client = InternalClient(settings, timeout=5)
    workspaces = Workspaces(repo, client, config)
    service = PostService(repo, workspaces, config, LazyEmbedder() if config.semantic_search else None,
                          people=PersonDirectory(client))
    return Context(settings=settings, store=store, config=config, workspaces=workspaces, service=service)


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="posts",
        context="posts.plugin:create_context",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        consumes=contract.CONSUMES,
        consumers="posts.consumers:handlers",
        models="posts.models:MODELS",
        workers={"embeddings": "posts.backfill:run"},
        openapi="posts:openapi.yaml",
    )
