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
    from common.directory import People
    from posts.access import Access
    from posts.board import Board
    from posts.config import PostsConfig
    from posts.embeddings import LazyEmbedder
    from posts.erasure import Erasure
    from posts.imports import Imports
    from posts.merges import Merges
    from posts.reads import Reads
    from posts.readmodel import Workspaces
    from posts.repository import PostRepository
    from posts.revenue import Revenue
    from posts.scores import Scores
    from posts.service import PostService
    from posts.votes import Votes

R = "posts.resources:"
TRIAGE_SAVES = Budget("triage-saves", quota=6, window=60)
ROUTES = [
    Route("/workspaces/{slug}/posts", R + "PostList", ("GET", "POST"), limits={"POST": "write"}),
    Route("/workspaces/{slug}/posts/search", R + "PostSearch", ("GET",), limits={"GET": "search"}),
    # A whole-board aggregation: budgeted like a search, which a visitor could flood too.
    Route("/workspaces/{slug}/posts/stats", R + "PostStats", ("GET",), limits={"GET": "search"}),
    Route("/workspaces/{slug}/posts/activity", R + "PostActivity", ("GET",), limits={"GET": "search"}),
    Route("/workspaces/{slug}/posts/{postId}", R + "PostItem", ("GET", "PATCH", "DELETE"), limits={"DELETE": "write"}),
    Route("/workspaces/{slug}/posts/{postId}/merge", R + "Merge", ("POST",)),
    Route("/workspaces/{slug}/posts/{postId}/unmerge", R + "Unmerge", ("POST",)),
    Route("/workspaces/{slug}/posts/{postId}/vote", R + "Vote", ("POST", "DELETE"), limits={"POST": "write", "DELETE": "write"}),
    Route("/workspaces/{slug}/posts/{postId}/votes", R + "VoteList", ("GET", "POST"), limits={"POST": "write"}),
    Route("/workspaces/{slug}/posts/{postId}/history", R + "PostHistory", ("GET",)),
    Route("/workspaces/{slug}/posts/{postId}/comments", R + "CommentList", ("GET", "POST"), limits={"POST": "write"}),
    Route("/workspaces/{slug}/posts/{postId}/comments/{commentId}", R + "CommentItem", ("PATCH", "DELETE"),
          limits={"PATCH": "write", "DELETE": "write"}),
    Route("/workspaces/{slug}/roadmap", R + "Roadmap", ("GET",)),
    # A save rescores every post of the workspace (posts.scores): a handful a minute for the
    # whole team, where a manager key's own budget would let it save 1,200 times.
    Route("/workspaces/{slug}/triage", R + "Triage", ("GET", "PUT"), budgets={"PUT": TRIAGE_SAVES}),
    # A preview scores every post of the workspace (nothing written): budgeted like a search.
    Route("/workspaces/{slug}/triage/preview", R + "TriagePreview", ("POST",), limits={"POST": "search"}),
    Route("/workspaces/{slug}/suggestions", R + "SuggestionList", ("GET",)),
    Route("/workspaces/{slug}/suggestions/{suggestionId}/accept", R + "SuggestionAccept", ("POST",)),
    Route("/workspaces/{slug}/suggestions/{suggestionId}/dismiss", R + "SuggestionDismiss", ("POST",)),
]
PERSONAL_DATA = "/internal/posts/personal-data"
INTERNAL_ROUTES = [
    Route("/internal/posts/lookup", R + "Lookup", ("POST",)),
    # Whether a board or a status has posts: the workspaces service deletes only one that has none.
    Route("/internal/posts/in-use", R + "InUse", ("POST",)),
    # Who a changelog entry ships to (the notifications service): asked of the owner, so a vote
    # made a moment before the entry counts however far its event is behind.
    Route("/internal/posts/voters", R + "Voters", ("POST",)),
    # A page of a workspace's posts, votes, comments, tags or fields for its export (portability).
    Route("/internal/posts/export", R + "Export", ("POST",)),
    # A batch of posts, votes, comments, merges or tags an import brings (portability), no events.
    Route("/internal/posts/import", R + "Import", ("POST",)),
    # What a person wrote and voted for, for their download of their data (people.privacy).
    Route(PERSONAL_DATA, "common.app:PersonalData", ("POST",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    """The service's concepts, one object each (docs/services/posts.md, "Code map"), over one
    repository: the resources call the one a route is about."""

    config: PostsConfig
    workspaces: Workspaces  # the in-memory read model
    reads: Reads  # reads of many posts (POSTS_READ_ENGINE)
    scores: Scores
    revenue: Revenue
    access: Access  # the caller's view of a post
    service: PostService  # posts, comments, triage settings
    votes: Votes
    merges: Merges  # and suggested duplicates
    board: Board  # lists, search, roadmap, statistics; sibling services' lookups
    imports: Imports  # what an import brings (portability)
    erasure: Erasure  # a person's data: listed, erased (docs/privacy.md)

    def start_api(self) -> None:
        self.workspaces.start_polling()  # mirror the read model in memory (API processes only)
        self.reads.start()
        threading.Thread(target=self.service.warm_up, name="model-warm-up", daemon=True).start()
        threading.Thread(target=self.board.backfill_last_comments, name="last-comments-backfill", daemon=True).start()

    def readiness(self) -> dict[str, Callable[[], None]]:
        return {"query-indexes": self._indexes_warm}

    def personal_data(self, user_id: str, workspace: str | None) -> dict:
        return self.erasure.data_of(user_id, workspace)

    def _indexes_warm(self) -> None:
        if not self.reads.ready():
            raise RuntimeError("warming up")  # reported as "unreachable: RuntimeError"


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from common.internal import InternalClient
    from common.directory import People
    from posts.config import load_config
    from posts.embeddings import LazyEmbedder
    from posts.models import ALIAS
    from posts.readmodel import Workspaces
    from posts.repository import PostRepository

    config = load_config()
    repo = PostRepository(Store(settings, ALIAS))
    client = InternalClient(settings, timeout=5)
    workspaces = Workspaces(repo, client, config)
    return wire(settings, repo, workspaces, config, LazyEmbedder() if config.semantic_search else None, People(client))


def wire(settings: Settings, repo: PostRepository, workspaces: Workspaces, config: PostsConfig,
         embedder: LazyEmbedder | None = None, people: People | None = None) -> Context:
    """The service's concepts over ``repo``: an API process's, or another one's over the same
    database (``embedder`` None: semantic search off; ``people`` None: no people service)."""
    from posts.access import Access
    from posts.board import Board
    from posts.erasure import Erasure
    from posts.imports import Imports
    from posts.merges import Merges
    from posts.reads import open_reads
    from posts.revenue import Revenue
    from posts.scores import Scores
    from posts.service import PostService
    from posts.votes import Votes

    reads = open_reads(repo, config)
    scores = Scores(repo)
    revenue = Revenue(repo, scores)
    access = Access(repo, workspaces, config, scores)
    votes = Votes(repo, access, workspaces, revenue, scores, people)
    return Context(
        settings=settings, store=repo.store, config=config, workspaces=workspaces, reads=reads, scores=scores,
        revenue=revenue, access=access,
        service=PostService(repo, access, workspaces, scores, votes, config, embedder, people),
        votes=votes,
        merges=Merges(repo, access, workspaces, revenue, scores, reads, config),
        board=Board(repo, access, workspaces, scores, reads, config, embedder),
        imports=Imports(repo, scores, revenue),
        erasure=Erasure(repo, votes, workspaces),
    )


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
        personal_data=PERSONAL_DATA,
    )
