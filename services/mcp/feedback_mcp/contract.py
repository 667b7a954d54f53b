"""What the MCP service serves, as data: the tools a key of each role is offered.

Small on purpose. A core service's contract names the collections it owns and the events it
publishes and consumes; this service owns no collection and publishes or consumes no event
(every effect of a tool is an API call, and the owning service publishes it). What it serves is
the MCP surface: these tool names by role here, their typed and described inputs in
``tools.py`` (the SDK derives each tool's JSON schema from them), the page ``/mcp`` with the
headers the gateway passes through in ``plugin.py``. Which role gets what is enforced again by
the API on every call; docs/services/mcp.md lists the same surface for people.
"""

READ_TOOLS = ("search_posts", "list_posts", "get_post", "get_roadmap", "list_changelogs", "board_stats", "get_triage_settings")
WRITE_TOOLS = ("create_post", "comment_on_post", "vote_on_post")
# Who is behind a post (addresses, companies, spend); the suggested duplicates.
MANAGER_READS = ("list_voters", "list_suggestions")
MANAGER_WRITES = ("vote_on_behalf",)
MANAGER_TOOLS = ("update_post", "triage_post", "merge_posts", "unmerge_post", "accept_suggestion", "dismiss_suggestion",
                 "create_changelog", "publish_changelog", *MANAGER_READS, *MANAGER_WRITES)
TOOLS_BY_ROLE = {
    "read": READ_TOOLS,
    "write": READ_TOOLS + WRITE_TOOLS,
    "manager": READ_TOOLS + WRITE_TOOLS + MANAGER_TOOLS,
}
