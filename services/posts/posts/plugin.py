"""The posts plugin: its routes, topics, consumers and models, for the platform."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common.config import Settings
from common.db import Store
from common.internal import InternalClient
from common.plugins import ServiceSpec, hookimpl
from posts import contract, resources as r
from posts.comments import CommentService
from posts.config import PostsConfig, load_config
from posts.consumers import handlers
from posts.merges import MergeService
from posts.models import ALIAS, MODELS
from posts.readmodel import Workspaces
from posts.service import PostService, PostStore
from posts.votes import VoteService

ROUTES = [
    ("/workspaces/{slug}/posts", r.PostList),
    ("/workspaces/{slug}/posts/search", r.PostSearch),
    ("/workspaces/{slug}/posts/{postId}", r.PostItem),
    ("/workspaces/{slug}/posts/{postId}/merge", r.Merge),
    ("/workspaces/{slug}/posts/{postId}/unmerge", r.Unmerge),
    ("/workspaces/{slug}/posts/{postId}/vote", r.Vote),
    ("/workspaces/{slug}/posts/{postId}/comments", r.CommentList),
    ("/workspaces/{slug}/roadmap", r.Roadmap),
]

INTERNAL_ROUTES = [("/internal/posts/lookup", r.Lookup)]


@dataclass
class Context:
    settings: Settings
    config: PostsConfig
    store: Store
    workspaces: Workspaces
    posts: PostService
    votes: VoteService
    comments: CommentService
    merges: MergeService


def create_context(settings: Settings) -> Context:
    config = load_config()
    store = Store(settings, ALIAS)
    workspaces = Workspaces(store.db, InternalClient(settings, timeout=5), config)
    repo = PostStore(store, workspaces, config)
    return Context(
        settings, config, store, workspaces, PostService(repo), VoteService(repo), CommentService(repo), MergeService(repo)
    )


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="posts",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        create_context=create_context,
        publishes=[contract.TOPIC],
        consumers=handlers,
        models=MODELS,
        openapi=Path(__file__).with_name("openapi.yaml"),
    )
