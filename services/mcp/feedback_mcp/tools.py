"""The MCP surface of one key: its tools, resources and prompts, on the SDK's ``MCPServer``.

Each tool is a typed, described call of the public API with the key (``api.py``); an API
refusal becomes a tool error carrying the API's ``{error}`` message. Which tools a key is
offered, and the reads that combine several calls, are the rules in ``service.py``.

Every id or slug an agent passes (a tool's, a resource's or a prompt's argument) must match its
pattern, checked by the SDK before any call: an id that could add a path segment ("../x") would
otherwise reach another route of the workspace with the key. Each value is also escaped as one
path segment where a path is built (``service.segment``). Prompts hand the agent what users
wrote inside a fence (``service.fenced``): data, never instructions.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types import Resource as McpResource
from mcp_types import ToolAnnotations
from pydantic import Field
from pydantic.fields import FieldInfo

from common.ids import HEX_ID, SLUG_PATTERN
from feedback_mcp import contract, service
from feedback_mcp.service import segment
from feedback_mcp.api import ApiError, WorkspaceApi
from feedback_mcp.config import McpConfig

ID_PATTERN = rf"^{HEX_ID.pattern}$"  # an id is 24 hex digits (common.ids)
TAG_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"  # a tag's slug, a custom field's key (docs/services/posts.md)
OWNER_PATTERN = r"^person:[A-Za-z0-9_-]{1,200}$"


def an_id(description: str) -> FieldInfo:
    return Field(pattern=ID_PATTERN, description=description)


def a_slug(description: str) -> FieldInfo:
    return Field(pattern=SLUG_PATTERN, description=description)


def matching(value: str | None, pattern: str, what: str, refuse) -> str | None:
    """``value`` if it matches ``pattern``; else ``refuse(message)`` is raised. For the arguments of
    prompts and resource templates, which the SDK would refuse with an opaque internal error:
    their refusal names the argument."""
    if value is not None and not re.fullmatch(pattern, value):
        raise refuse(f"{what} must match {pattern}")
    return value


def invalid_params(message: str) -> MCPError:
    return MCPError(INVALID_PARAMS, message)


PostId = Annotated[str, an_id("The post's id (24 hex digits), as list_posts or search_posts return it")]
Board = Annotated[str | None, a_slug("A board's slug (see the agent context or a board resource); omit for every board")]
Limit = Annotated[int, Field(ge=1, le=100, description="How many items to return (1-100)")]
Offset = Annotated[int, Field(ge=0, le=10000, description="How many items to skip, for paging")]
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
CHANGES = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)
ANNOTATIONS = {**{n: CHANGES for n in contract.MANAGER_TOOLS},
               **{n: READ_ONLY for n in contract.READ_TOOLS + contract.MANAGER_READS},
               **{n: WRITES for n in contract.WRITE_TOOLS + contract.MANAGER_WRITES}}


def calling(api_call, error: type[Exception] = ToolError):
    """Run one API call; an API refusal becomes the tool's (or with ``error=ResourceError``, the
    resource's) error, with the API's message."""
    try:
        return api_call()
    except ApiError as ex:
        raise error(service.error_text(ex)) from None


class Tools:
    """Every tool, as methods; ``build_server`` registers those the key's role is offered."""

    def __init__(self, api: WorkspaceApi, config: McpConfig):
        self.api = api
        self.config = config

    # -- reads ----------------------------------------------------------------------------

    def search_posts(
        self,
        query: Annotated[str, Field(min_length=1, max_length=500, description="Words to look for, e.g. a new request's title; finds similar posts (duplicates)")],
        board: Board = None,
        limit: Annotated[int, Field(ge=1, le=50, description="How many posts to return (1-50)")] = 10,
    ) -> dict[str, Any]:
        """Find posts similar to a text, most similar first; each post has `similarity` in [0, 1]."""
        return calling(lambda: self.api.get("/posts/search", q=query, board=board, limit=limit))

    def list_posts(
        self,
        board: Board = None,
        status: Annotated[str | None, a_slug("A status slug (e.g. open, planned, complete); omit for every status")] = None,
        query: Annotated[str | None, Field(description="Keep posts containing every significant word of this text")] = None,
        sort: Annotated[Literal["newest", "oldest", "top", "discussed", "revenue", "score"],
                        Field(description="newest, oldest, top (most votes), discussed (most comments) or, managers only, "
                                          "revenue (the monthly spend of the companies behind the votes) or score (the "
                                          "workspace's formula: get_triage_settings)")] = "newest",
        moderation_state: Annotated[Literal["approved", "pending", "rejected", "spam"] | None, Field(description="Managers only: posts in this moderation state")] = None,
        tags: Annotated[list[Annotated[str, Field(pattern=TAG_PATTERN)]], Field(max_length=10, description="Keep posts with every one of these tag slugs")] = [],  # noqa: B006 - pydantic copies defaults
        owner: Annotated[str | None, Field(pattern=OWNER_PATTERN, description="Managers only: keep posts owned by this team member (person:<id>)")] = None,
        fields: Annotated[dict[Annotated[str, Field(pattern=TAG_PATTERN)], str], Field(max_length=10, description="Keep posts whose select, multiselect or checkbox field has this value, e.g. {\"platform\": \"ios\", \"blocker\": \"true\"}")] = {},  # noqa: B006
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """List posts with filters and a sort (merged posts are never listed)."""
        return calling(lambda: self.api.get("/posts", board=board, status=status, q=query, sort=sort, moderationState=moderation_state,
                                            tag=tags or None, owner=owner, limit=limit, offset=offset,
                                            **{f"field.{k}": v for k, v in fields.items()}))

    def get_post(self, post_id: PostId) -> dict[str, Any]:
        """Read one post with its comment thread (thread order: each comment followed by its replies)."""
        post = calling(lambda: self.api.get(f"/posts/{segment(post_id)}"))
        comments = calling(lambda: self.api.get(f"/posts/{segment(post_id)}/comments", limit=service.COMMENTS_LIMIT))["items"]
        return {"post": post, "comments": comments}

    def get_triage_settings(self) -> dict[str, Any]:
        """The workspace's tags and custom fields (each with its key, type and options), for filters and
        triage_post; managers also see the internal fields and the score formula."""
        return calling(lambda: self.api.get("/triage"))

    def get_roadmap(self, board: Board = None) -> dict[str, Any]:
        """The public roadmap: one column per roadmap status, most voted posts first."""
        return calling(lambda: self.api.get("/roadmap", board=board))

    def list_changelogs(self, limit: Limit = 20, offset: Offset = 0) -> dict[str, Any]:
        """Changelog entries, newest first (drafts too, for managers)."""
        return calling(lambda: self.api.get("/changelogs", limit=limit, offset=offset))

    def board_stats(
        self,
        board: Board = None,
        stalled_days: Annotated[int, Field(ge=0, le=3650, description="A post is stalled when its last public comment is a non-team member's and older than this many days")] = 14,
        top: Annotated[int, Field(ge=1, le=50, description="How many top voted and newest posts to include")] = 5,
    ) -> dict[str, Any]:
        """Statistics of a board (or all): post counts by status, the top voted and newest posts, and
        stalled posts (at most 50, longest waiting first), where a customer commented last and the team
        has been silent for `stalled_days`."""
        return calling(lambda: service.board_stats(self.api, board, stalled_days, top))

    # -- what any identified end user may do -----------------------------------------------

    def create_post(
        self,
        board: Annotated[str, a_slug("The board's slug")],
        title: Annotated[str, Field(min_length=1, max_length=200, description="A short summary of the request")],
        content: Annotated[str, Field(max_length=20000, description="Details, in markdown")] = "",
    ) -> dict[str, Any]:
        """Submit a feedback post, as this key's agent. Search first (search_posts): vote on a duplicate instead."""
        return calling(lambda: self.api.post("/posts", {"boardSlug": board, "title": title, "content": content}))

    def comment_on_post(
        self,
        post_id: PostId,
        content: Annotated[str, Field(min_length=1, max_length=10000, description="The comment, in markdown")],
        parent_id: Annotated[str | None, an_id("Reply to this comment (its id, 24 hex digits); omit for a top-level comment")] = None,
        private: Annotated[bool, Field(description="Managers only: a note only the team sees")] = False,
    ) -> dict[str, Any]:
        """Comment on a post (or reply to a comment)."""
        payload = {"content": content, **({"parentId": parent_id} if parent_id else {}), **({"isPrivate": True} if private else {})}
        return calling(lambda: self.api.post(f"/posts/{segment(post_id)}/comments", payload))

    def vote_on_post(
        self,
        post_id: PostId,
        vote: Annotated[bool, Field(description="true casts this key's vote; false withdraws it")] = True,
    ) -> dict[str, Any]:
        """Vote for a post, or withdraw the vote; answers the post with its new voteCount."""
        path = f"/posts/{segment(post_id)}/vote"
        return calling(lambda: self.api.post(path) if vote else self.api.delete(path))

    # -- managers -------------------------------------------------------------------------

    def update_post(
        self,
        post_id: PostId,
        status: Annotated[str | None, a_slug("A status slug to move the post to (e.g. planned, complete)")] = None,
        moderation_state: Annotated[Literal["approved", "pending", "rejected", "spam"] | None, Field(description="Approve, hold, reject or mark as spam")] = None,
        title: Annotated[str | None, Field(min_length=1, max_length=200, description="A new title")] = None,
        content: Annotated[str | None, Field(max_length=20000, description="New details, in markdown")] = None,
    ) -> dict[str, Any]:
        """Change a post's status, moderation state, title or content (give at least one)."""
        changes = {k: v for k, v in {"statusSlug": status, "moderationState": moderation_state, "title": title, "content": content}.items() if v is not None}
        if not changes:
            raise ToolError("give at least one of status, moderation_state, title, content")
        return calling(lambda: self.api.patch(f"/posts/{segment(post_id)}", changes))

    def triage_post(
        self,
        post_id: PostId,
        owner: Annotated[str | None, Field(pattern=OWNER_PATTERN, description="The team member who owns it (person:<id>)")] = None,
        eta: Annotated[str | None, Field(pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])$", description="The month it should ship, YYYY-MM")] = None,
        tags: Annotated[list[Annotated[str, Field(pattern=TAG_PATTERN)]] | None, Field(max_length=100, description="Its tags by slug, replacing the ones it has")] = None,
        fields: Annotated[dict[Annotated[str, Field(pattern=TAG_PATTERN)], Any] | None, Field(max_length=50, description="Custom field values by key (null clears one), merged into the post's")] = None,
        clear: Annotated[list[Literal["owner", "eta"]], Field(description="Remove the owner or the ETA")] = [],  # noqa: B006
    ) -> dict[str, Any]:
        """Triage a post: its owner, ETA, tags and custom fields (see get_triage_settings). Give at least one."""
        changes = {k: v for k, v in {"owner": owner, "eta": eta, "tags": tags, "fields": fields}.items() if v is not None}
        changes.update({k: None for k in clear})
        if not changes:
            raise ToolError("give at least one of owner, eta, tags, fields, clear")
        return calling(lambda: self.api.patch(f"/posts/{segment(post_id)}", changes))

    def list_suggestions(
        self,
        state: Annotated[Literal["open", "accepted", "dismissed", "superseded"], Field(description="open: waiting for the team")] = "open",
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """Suggested duplicates, newest first: each new post with a similar listed post and how similar
        (accept_suggestion merges the first into the second; dismiss_suggestion: never suggested again)."""
        return calling(lambda: self.api.get("/suggestions", state=state, limit=limit, offset=offset))

    def accept_suggestion(self, suggestion_id: Annotated[str, Field(pattern=ID_PATTERN, description="The suggestion's id, as list_suggestions returns it")]) -> dict[str, Any]:
        """Accept a suggested duplicate: its post is merged into the other (votes move); answers the merged post."""
        return calling(lambda: self.api.post(f"/suggestions/{segment(suggestion_id)}/accept"))

    def dismiss_suggestion(self, suggestion_id: Annotated[str, Field(pattern=ID_PATTERN, description="The suggestion's id, as list_suggestions returns it")]) -> dict[str, Any]:
        """Dismiss a suggested duplicate: the two posts are not the same request; never suggested again."""
        return calling(lambda: self.api.post(f"/suggestions/{segment(suggestion_id)}/dismiss"))

    def merge_posts(
        self,
        post_id: Annotated[str, an_id("The duplicate post's id (24 hex digits): it leaves lists and its votes move")],
        into_post_id: Annotated[str, an_id("The canonical post's id (24 hex digits), which keeps the votes")],
    ) -> dict[str, Any]:
        """Merge a duplicate into a canonical post; answers the merged (duplicate) post."""
        return calling(lambda: self.api.post(f"/posts/{segment(post_id)}/merge", {"intoPostId": into_post_id}))

    def unmerge_post(self, post_id: PostId) -> dict[str, Any]:
        """Undo a merge: the post and its votes come back as they were."""
        return calling(lambda: self.api.post(f"/posts/{segment(post_id)}/unmerge"))

    def list_voters(self, post_id: PostId, limit: Limit = 50, offset: Offset = 0) -> dict[str, Any]:
        """Who is behind a post: its votes newest first, each with the voter's name and address, their
        companies and monthly spend, and for a vote added on someone's behalf who added it and from where."""
        return calling(lambda: self.api.get(f"/posts/{segment(post_id)}/votes", limit=limit, offset=offset))

    def vote_on_behalf(
        self,
        post_id: PostId,
        email: Annotated[str, Field(min_length=3, max_length=254, description="The customer's email address (their own vote later is the same vote)")],
        source: Annotated[str, Field(min_length=1, max_length=200, description='Where the request came from, e.g. "Zendesk #4411" or "Sales call with Acme"')],
        source_url: Annotated[str | None, Field(max_length=2000, pattern=r"^https?://\S+$", description="A link to the ticket or call notes")] = None,
        note: Annotated[str | None, Field(max_length=2000, description="What the customer said (team only)")] = None,
    ) -> dict[str, Any]:
        """Add a vote for a customer, from a support ticket or a sales call; it counts once per person."""
        body = {"email": email, "source": {"text": source, **({"url": source_url} if source_url else {})},
                **({"note": note} if note else {})}
        return calling(lambda: self.api.post(f"/posts/{segment(post_id)}/votes", body))

    def create_changelog(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200, description="The entry's title")],
        slug: Annotated[str, Field(pattern=SLUG_PATTERN, description="A URL slug: lower-case letters, digits and inner hyphens, at most 48")],
        content: Annotated[str, Field(min_length=1, max_length=50000, description="The entry, in markdown")],
        post_ids: Annotated[list[Annotated[str, Field(pattern=ID_PATTERN)]], Field(max_length=100, description="Ids of the posts this entry announces (24 hex digits each)")] = [],  # noqa: B006 - pydantic copies defaults
        publish: Annotated[bool, Field(description="Publish now; false keeps a draft (publish_changelog later)")] = False,
    ) -> dict[str, Any]:
        """Write a changelog entry, a draft unless publish is true."""
        return calling(lambda: self.api.post("/changelogs", {"title": title, "slug": slug, "content": content, "postIds": post_ids, "publish": publish}))

    def publish_changelog(self, changelog_id: Annotated[str, an_id("The draft entry's id (24 hex digits)")]) -> dict[str, Any]:
        """Publish a draft changelog entry (sets publishedAt)."""
        return calling(lambda: self.api.patch(f"/changelogs/{segment(changelog_id)}", {"publish": True}))


class FeedbackServer(MCPServer):
    """An MCPServer whose resource list names the workspace's boards and published changelog
    entries as they are when a client asks (their reads are resource templates)."""

    def __init__(self, api: WorkspaceApi, **kwargs):
        super().__init__(**kwargs)
        self.api = api

    async def list_resources(self) -> list[McpResource]:
        listed = await super().list_resources()
        return listed + await anyio.to_thread.run_sync(self._workspace_resources)

    def _workspace_resources(self) -> list[McpResource]:
        slug = self.api.slug
        boards = calling(lambda: self.api.get("/boards"), ResourceError)["items"]
        entries = [e for e in calling(lambda: self.api.get("/changelogs", limit=100), ResourceError)["items"] if e["publishedAt"]]
        return [
            *(McpResource(uri=f"feedback://{slug}/boards/{b['slug']}", name=f"board-{b['slug']}", title=f"Board: {b['name']}",
                          description="The board and its most voted posts", mime_type="application/json") for b in boards),
            *(McpResource(uri=f"feedback://{slug}/changelogs/{e['id']}", name=f"changelog-{e['slug']}", title=f"Changelog: {e['title']}",
                          description=f"Published {e['publishedAt']}", mime_type="text/markdown") for e in entries),
        ]


def build_server(api: WorkspaceApi, config: McpConfig) -> FeedbackServer:
    """The server one key sees: the tools its role is offered, the workspace's resources, prompts."""
    slug, manager = api.slug, service.is_manager(api)
    server = FeedbackServer(
        api,
        name="feedback",
        instructions=(
            f"Feedback of workspace '{slug}' (your key's role: {api.info.role}). Search before filing "
            "(search_posts): vote on or comment an existing post instead of creating a duplicate."
        ),
    )
    tools = Tools(api, config)
    for name in service.tools_for(api.info.role):
        server.add_tool(getattr(tools, name), name=name, annotations=ANNOTATIONS[name])

    if manager:  # the agent context is the managers' (it carries the brand voice)
        @server.resource(f"feedback://{slug}/agent-context", name="agent-context", title="Agent context",
                         description="The workspace as agents need it: name, brand voice, boards, statuses, recent changelog", mime_type="application/json")
        def agent_context() -> str:
            return json.dumps(calling(lambda: api.get("/agent-context"), ResourceError))

    @server.resource(f"feedback://{slug}/boards/{{board}}", name="board", title="A board",
                     description="The board and its most voted posts", mime_type="application/json")
    def board(board: str) -> str:
        matching(board, SLUG_PATTERN, "a board's slug", ResourceNotFoundError)
        boards = {b["slug"]: b for b in calling(lambda: api.get("/boards"), ResourceError)["items"]}
        if board not in boards:
            raise ResourceError(f"board '{board}' not found")
        posts = calling(lambda: api.get("/posts", board=board, sort="top", limit=50), ResourceError)["items"]
        return json.dumps({"board": boards[board], "topPosts": posts})

    @server.resource(f"feedback://{slug}/changelogs/{{changelog_id}}", name="changelog", title="A changelog entry",
                     description="A published changelog entry, in markdown", mime_type="text/markdown")
    def changelog(changelog_id: str) -> str:
        matching(changelog_id, ID_PATTERN, "a changelog entry's id", ResourceNotFoundError)
        entry = calling(lambda: api.get(f"/changelogs/{segment(changelog_id)}"), ResourceError)
        return f"# {entry['title']}\n\n_Published {entry['publishedAt'] or '(draft)'}_\n\n{entry['content']}\n"

    @server.prompt(name="triage_new_feedback", title="Triage new feedback",
                   description="Group new posts, propose merges of duplicates and a status for each")
    def triage_new_feedback(
        board: Annotated[str | None, Field(description="Only this board's posts (its slug)")] = None,
    ) -> str:
        matching(board, SLUG_PATTERN, "board", invalid_params)
        material = calling(lambda: service.triage_material(api, board, limit=20))
        return (
            "You are triaging new feedback. For the posts below: group those about the same need; for each "
            "group propose the canonical post and the duplicates to merge into it (merge_posts), using the "
            "`similar` candidates search found (similarity near 1 is a likely duplicate); propose a status for "
            "each canonical post from `statuses`" + (" and a moderation state for posts awaiting moderation" if manager else "")
            + ". List the proposals first and apply nothing until they are confirmed.\n\n"
            + service.fenced(material)
        )

    if manager:  # only managers write changelogs, and only they read the brand voice
        @server.prompt(name="draft_changelog", title="Draft a changelog entry",
                       description="Draft a changelog entry from the posts completed since the last one, in the workspace's brand voice")
        def draft_changelog(
            status: Annotated[str, Field(description="The status slug of shipped posts")] = "complete",
        ) -> str:
            matching(status, SLUG_PATTERN, "status", invalid_params)
            material = calling(lambda: service.changelog_material(api, status, config.stats_max_posts))
            return (
                "Draft a changelog entry announcing the posts below (shipped, and not in any published entry yet). "
                "Write in the workspace's brand voice (`brandVoice`; plain and friendly when it is empty), "
                "continuing from the last entry without repeating it; a short title, then one short paragraph "
                "or bullet per change, saying what users can now do. Then call create_changelog with a slug, "
                "the markdown content and post_ids = the ids you announced (publish=false, for review).\n\n"
                + service.fenced(material)
            )

    return server
