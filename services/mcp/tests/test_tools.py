"""The MCP server through the running platform, with the SDK's own client: what each key's role
is offered, every tool with good and bad input, and refusals that stay tool errors."""

from __future__ import annotations

import os
import subprocess

import anyio

import pytest
import requests

from testkit import assert_error

from .helpers import FEEDBACK, TRANSPORTS, CountingProxy, data, error, session

READS = {"search_posts", "list_posts", "get_post", "get_roadmap", "list_changelogs", "board_stats", "get_triage_settings"}
WRITES = {"create_post", "comment_on_post", "vote_on_post"}
MANAGES = {"update_post", "triage_post", "merge_posts", "unmerge_post", "accept_suggestion", "dismiss_suggestion", "create_changelog",
           "publish_changelog", "list_voters", "list_suggestions", "vote_on_behalf"}
OFFERED = {"read": READS, "write": READS | WRITES, "manager": READS | WRITES | MANAGES}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tools_offered_per_role(stack, keys, transport):
    for role, expected in OFFERED.items():

        async def steps(client):
            tools = (await client.list_tools()).tools
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            return tools, prompts

        tools, prompts = session(transport, stack.url, keys[role], steps)
        assert {t.name for t in tools} == expected, role
        for tool in tools:  # every input an agent can act on: typed and described
            assert tool.description, tool.name
            for name, schema in tool.input_schema.get("properties", {}).items():
                assert schema.get("description"), f"{tool.name}.{name} has no description"
        assert prompts == ({"triage_new_feedback", "draft_changelog"} if role == "manager" else {"triage_new_feedback"})


def test_http_refusals_are_json_errors(stack, keys):
    url = stack.url + "/mcp"
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    json_rpc = {"Accept": "application/json, text/event-stream"}
    message = assert_error(requests.post(url, json=hello, headers=json_rpc, timeout=10), 401)
    assert "Bearer" in message
    assert_error(requests.post(url, json=hello, headers={**json_rpc, "Authorization": "Basic abc"}, timeout=10), 401)
    assert_error(requests.post(url, json=hello, headers={**json_rpc, "Authorization": "Bearer fbk_0123456789abcdef_nope"}, timeout=10), 401)
    assert_error(requests.get(url, headers={"Authorization": f"Bearer {keys['read']}"}, timeout=10), 405)
    # the service itself answers only what the gateway signed
    assert_error(requests.post(stack.service_url("mcp") + "/mcp", json=hello, headers={**json_rpc, "Authorization": f"Bearer {keys['read']}"}, timeout=10), 401)
    # a good key: one JSON-RPC answer as JSON (stateless, JSON-response mode)
    r = requests.post(url, json=hello, headers={**json_rpc, "Authorization": f"Bearer {keys['read']}",
                                               "Mcp-Protocol-Version": "2025-06-18"}, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json"), r.text
    assert {t["name"] for t in r.json()["result"]["tools"]} == READS


def post_via_api(api, workspace, key, title, content=""):
    r = api.post(f"{workspace.path}/posts", key=key, json={"boardSlug": "features", "title": title, "content": content})
    assert r.status_code == 201, r.text
    return r.json()


def test_every_tool_with_good_and_bad_input(stack, api, workspace, keys):
    """Each tool once with input the API accepts (its effect read back through /v1) and once
    with input it refuses or the schema forbids: a tool error, and the session goes on."""
    existing = post_via_api(api, workspace, keys["manager"], "Export reports to CSV", "Monthly exports please")
    missing = "0" * 24
    v1 = lambda path, key=keys["manager"]: api.get(workspace.path + path, key=key).json()  # noqa: E731

    async def as_writer(client):
        created = data(await client.call_tool("create_post", {"board": "features", "title": "Dark mode for the dashboard", "content": "Too bright at night"}))
        bad_board = error(await client.call_tool("create_post", {"board": "nope", "title": "x"}))
        no_title = error(await client.call_tool("create_post", {"board": "features"}))
        comment = data(await client.call_tool("comment_on_post", {"post_id": existing["id"], "content": "Same need here"}))
        empty_comment = error(await client.call_tool("comment_on_post", {"post_id": existing["id"], "content": ""}))
        private = error(await client.call_tool("comment_on_post", {"post_id": existing["id"], "content": "psst", "private": True}))
        voted = data(await client.call_tool("vote_on_post", {"post_id": existing["id"]}))
        vote_missing = error(await client.call_tool("vote_on_post", {"post_id": missing}))
        manage = error(await client.call_tool("update_post", {"post_id": existing["id"], "status": "planned"}))
        return locals()

    w = session("http", stack.url, keys["write"], as_writer)
    assert w["created"]["title"] == "Dark mode for the dashboard" and w["created"]["verified"] is True
    assert v1(f"/posts/{w['created']['id']}")["title"] == "Dark mode for the dashboard"
    assert "board" in w["bad_board"] and "(HTTP 404)" in w["bad_board"]
    assert "title" in w["no_title"]
    assert w["comment"]["content"] == "Same need here" and w["comment"]["isTeamMember"] is False
    assert [c["content"] for c in v1(f"/posts/{existing['id']}/comments")["items"]] == ["Same need here"]
    assert "(HTTP 400)" in w["empty_comment"] or "content" in w["empty_comment"]
    assert "(HTTP 403)" in w["private"]
    assert w["voted"]["voteCount"] == 1 and w["voted"]["voted"] is True
    assert v1(f"/posts/{existing['id']}")["voteCount"] == 1
    assert "(HTTP 404)" in w["vote_missing"]
    assert "update_post" in w["manage"]  # not offered to a write key: unknown to its session

    async def as_manager(client):
        found = data(await client.call_tool("search_posts", {"query": "csv export"}))
        no_query = error(await client.call_tool("search_posts", {"query": ""}))
        listed = data(await client.call_tool("list_posts", {"sort": "top", "limit": 5}))
        bad_sort = error(await client.call_tool("list_posts", {"sort": "loudest"}))
        bad_limit = error(await client.call_tool("list_posts", {"limit": 0}))
        post = data(await client.call_tool("get_post", {"post_id": existing["id"]}))
        no_post = error(await client.call_tool("get_post", {"post_id": missing}))
        roadmap = data(await client.call_tool("get_roadmap", {}))
        no_board_roadmap = data(await client.call_tool("get_roadmap", {"board": "nope"}))
        updated = data(await client.call_tool("update_post", {"post_id": existing["id"], "status": "planned", "title": "Export reports (CSV)"}))
        bad_status = error(await client.call_tool("update_post", {"post_id": existing["id"], "status": "nope"}))
        nothing = error(await client.call_tool("update_post", {"post_id": existing["id"]}))
        merged = data(await client.call_tool("merge_posts", {"post_id": w["created"]["id"], "into_post_id": existing["id"]}))
        self_merge = error(await client.call_tool("merge_posts", {"post_id": existing["id"], "into_post_id": existing["id"]}))
        unmerged = data(await client.call_tool("unmerge_post", {"post_id": w["created"]["id"]}))
        not_merged = error(await client.call_tool("unmerge_post", {"post_id": w["created"]["id"]}))
        draft = data(await client.call_tool("create_changelog", {"title": "CSV exports", "slug": "csv-exports", "content": "You can export.", "post_ids": [existing["id"]]}))
        bad_slug = error(await client.call_tool("create_changelog", {"title": "x", "slug": "Not A Slug", "content": "x"}))
        unknown_post = error(await client.call_tool("create_changelog", {"title": "x", "slug": "x", "content": "x", "post_ids": [missing]}))
        published = data(await client.call_tool("publish_changelog", {"changelog_id": draft["id"]}))
        no_entry = error(await client.call_tool("publish_changelog", {"changelog_id": missing}))
        entries = data(await client.call_tool("list_changelogs", {"limit": 5}))
        bad_page = error(await client.call_tool("list_changelogs", {"offset": -1}))
        stats = data(await client.call_tool("board_stats", {"board": "features", "top": 2}))
        bad_stats = error(await client.call_tool("board_stats", {"stalled_days": -1}))
        voted_off = data(await client.call_tool("vote_on_post", {"post_id": existing["id"], "vote": False}))
        on_behalf = data(await client.call_tool("vote_on_behalf", {"post_id": w["created"]["id"], "email": "buyer@example.com",
                                                                    "source": "Zendesk #4411", "note": "Renewal blocker"}))
        bad_email = error(await client.call_tool("vote_on_behalf", {"post_id": w["created"]["id"], "email": "nobody", "source": "x"}))
        voters = data(await client.call_tool("list_voters", {"post_id": w["created"]["id"]}))
        return locals()

    m = session("http", stack.url, keys["manager"], as_manager)
    assert m["found"]["items"][0]["id"] == existing["id"] and 0 < m["found"]["items"][0]["similarity"] <= 1
    assert "q" in m["no_query"] or "query" in m["no_query"]
    assert [p["id"] for p in m["listed"]["items"]] == [existing["id"], w["created"]["id"]]  # top: 1 vote first
    assert "sort" in m["bad_sort"] and "limit" in m["bad_limit"]
    assert m["on_behalf"]["email"] == "buyer@example.com" and m["on_behalf"]["source"] == {"text": "Zendesk #4411"}
    assert "email" in m["bad_email"]
    assert [v["email"] for v in m["voters"]["items"]][0] == "buyer@example.com", "newest first"
    assert m["voters"]["items"][0]["note"] == "Renewal blocker" and m["voters"]["items"][0]["addedBy"] is not None
    assert m["post"]["post"]["id"] == existing["id"] and [c["content"] for c in m["post"]["comments"]] == ["Same need here"]
    assert "(HTTP 404)" in m["no_post"]
    assert {c["status"]["slug"] for c in m["roadmap"]["columns"]} >= {"open", "planned"}
    assert all(c["items"] == [] for c in m["no_board_roadmap"]["columns"])
    assert m["updated"]["status"]["slug"] == "planned" and m["updated"]["title"] == "Export reports (CSV)"
    assert v1(f"/posts/{existing['id']}")["status"]["slug"] == "planned"
    assert "(HTTP 404)" in m["bad_status"] and "at least one" in m["nothing"]
    assert m["merged"]["mergedInto"]["id"] == existing["id"] and "(HTTP 400)" in m["self_merge"]
    assert m["unmerged"]["mergedInto"] is None and "(HTTP 409)" in m["not_merged"]
    assert v1(f"/posts/{w['created']['id']}")["mergedInto"] is None
    assert m["draft"]["publishedAt"] is None and "slug" in m["bad_slug"] and "(HTTP 404)" in m["unknown_post"]
    assert m["published"]["publishedAt"] and "(HTTP 404)" in m["no_entry"]
    assert v1(f"/changelogs/{m['draft']['id']}", key=None)["publishedAt"] == m["published"]["publishedAt"]  # public now
    assert [e["id"] for e in m["entries"]["items"]] == [m["draft"]["id"]] and "offset" in m["bad_page"]
    assert m["stats"]["byStatus"] == {"open": 1, "planned": 1} and m["stats"]["postsCounted"] == 2 and m["stats"]["complete"]
    assert [p["id"] for p in m["stats"]["topVoted"]] == [existing["id"], w["created"]["id"]]
    assert "stalled_days" in m["bad_stats"]
    assert m["voted_off"]["voted"] is False  # the manager had not voted: withdrawing changes nothing
    assert v1(f"/posts/{existing['id']}")["voteCount"] == 1


def test_board_stats_finds_stalled_posts(stack, api, workspace, keys):
    """Stalled: a customer commented last and the team has said nothing since (here: for more
    than 0 days, i.e. at all); a post the team answered last, or nobody commented, is not."""
    waiting = post_via_api(api, workspace, keys["write"], "Waiting for an answer")
    answered = post_via_api(api, workspace, keys["write"], "Answered by the team")
    quiet = post_via_api(api, workspace, keys["write"], "Nobody commented")
    for post, key in ((waiting, keys["manager"]), (waiting, keys["write"]), (answered, keys["write"]), (answered, keys["manager"])):
        r = api.post(f"{workspace.path}/posts/{post['id']}/comments", key=key, json={"content": "a comment"})
        assert r.status_code == 201, r.text

    async def steps(client):
        return (data(await client.call_tool("board_stats", {"stalled_days": 0})),
                data(await client.call_tool("board_stats", {"stalled_days": 30})))

    now, month = session("http", stack.url, keys["read"], steps)
    assert [p["id"] for p in now["stalled"]] == [waiting["id"]] and now["stalled"][0]["daysWaiting"] == 0
    assert month["stalled"] == []  # nobody has waited 30 days yet
    assert [p["id"] for p in now["newest"]] == [quiet["id"], answered["id"], waiting["id"]]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_read_key_is_refused_every_write(stack, api, workspace, keys, transport):
    """A read key is offered no write tool, and calling one anyway is a tool error; the same
    writes through /v1 with the key are 403."""
    post = post_via_api(api, workspace, keys["manager"], "Something to write on")
    writes = {
        "create_post": {"board": "features", "title": "x"},
        "comment_on_post": {"post_id": post["id"], "content": "x"},
        "vote_on_post": {"post_id": post["id"]},
        "update_post": {"post_id": post["id"], "status": "planned"},
        "merge_posts": {"post_id": post["id"], "into_post_id": post["id"]},
        "unmerge_post": {"post_id": post["id"]},
        "create_changelog": {"title": "x", "slug": "x", "content": "x"},
        "publish_changelog": {"changelog_id": "0" * 24},
        "vote_on_behalf": {"post_id": post["id"], "email": "a@example.com", "source": "x"},
        "triage_post": {"post_id": post["id"], "eta": "2027-01"},
        "list_suggestions": {},
        "accept_suggestion": {"suggestion_id": "0" * 24},
        "dismiss_suggestion": {"suggestion_id": "0" * 24},
    }

    async def steps(client):
        offered = {t.name for t in (await client.list_tools()).tools}
        refusals = {name: error(await client.call_tool(name, args)) for name, args in writes.items()}
        still = data(await client.call_tool("get_post", {"post_id": post["id"]}))  # the session goes on
        return offered, refusals, still

    offered, refusals, still = session(transport, stack.url, keys["read"], steps)
    assert offered == READS
    assert all(name in message for name, message in refusals.items()), refusals
    assert still["post"]["id"] == post["id"]
    p = f"{workspace.path}/posts/{post['id']}"
    for method, path, body in [
        ("POST", f"{workspace.path}/posts", {"boardSlug": "features", "title": "x", "content": ""}),
        ("POST", p + "/comments", {"content": "x"}),
        ("POST", p + "/vote", None),
        ("DELETE", p + "/vote", None),
        ("PATCH", p, {"statusSlug": "planned"}),
        ("POST", p + "/merge", {"intoPostId": post["id"]}),
        ("POST", p + "/unmerge", None),
        ("POST", f"{workspace.path}/changelogs", {"title": "x", "slug": "x", "content": "x"}),
    ]:
        assert_error(api.call(method, path, key=keys["read"], json=body), 403)
    after = api.get(p, key=keys["manager"]).json()
    assert (after["voteCount"], after["commentCount"], after["status"]["slug"]) == (0, 0, "open")


def test_stdio_server_refuses_to_start_without_a_good_key(stack):
    run = lambda *args, **env: subprocess.run([FEEDBACK, "mcp", *args], capture_output=True, text=True, timeout=60,  # noqa: E731
                                              env={**os.environ, **env})
    bad = run("--base-url", stack.url, "--api-key", "fbk_0123456789abcdef_nope")
    assert bad.returncode != 0 and "refused the key: invalid API key (HTTP 401)" in bad.stderr
    missing = run("--base-url", stack.url)
    assert missing.returncode == 2 and "--api-key" in missing.stderr


def test_ids_that_could_reach_another_route_are_refused_before_any_call(stack, api, workspace, keys):
    """Every id and slug argument has a strict pattern: a value that could add a path segment is
    refused by the SDK as invalid input, and the server makes no API request at all for it (the
    stdio server's every call goes through a counting proxy). Without the patterns,
    update_post(post_id="../changelogs/<id>") would rename a changelog entry."""
    post = post_via_api(api, workspace, keys["manager"], "A post to aim at")
    entry = api.post(f"{workspace.path}/changelogs", key=keys["manager"], json={"title": "Draft", "slug": "draft", "content": "x"}).json()
    pid, eid = post["id"], entry["id"]
    bad_calls = [
        ("update_post", {"post_id": f"../changelogs/{eid}", "title": "Hijacked"}),
        ("get_post", {"post_id": "../x"}),
        ("get_post", {"post_id": f"{pid}/../../boards"}),
        ("get_post", {"post_id": pid + "\n"}),
        ("get_post", {"post_id": "%2e%2e"}),
        ("vote_on_post", {"post_id": "../x"}),
        ("unmerge_post", {"post_id": f"../changelogs/{eid}"}),
        ("comment_on_post", {"post_id": pid, "content": "x", "parent_id": "../x"}),
        ("comment_on_post", {"post_id": f"{pid}?x=1", "content": "x"}),
        ("merge_posts", {"post_id": "../x", "into_post_id": pid}),
        ("merge_posts", {"post_id": pid, "into_post_id": "../x"}),
        ("publish_changelog", {"changelog_id": f"../posts/{pid}"}),
        ("create_changelog", {"title": "x", "slug": "../x", "content": "x"}),
        ("create_changelog", {"title": "x", "slug": "fine", "content": "x", "post_ids": [f"../posts/{pid}"]}),
        ("list_posts", {"board": "../x"}),
        ("list_posts", {"status": "open/../../x"}),
        ("search_posts", {"query": "x", "board": "Features"}),
        ("get_roadmap", {"board": "a/b"}),
        ("board_stats", {"board": ".."}),
        ("create_post", {"board": "features/../x", "title": "x"}),
        ("update_post", {"post_id": pid, "status": "../x"}),
    ]
    proxy = CountingProxy(stack.url)

    async def steps(client):
        before = len(proxy.seen)
        refusals = [(name, error(await client.call_tool(name, args))) for name, args in bad_calls]
        bad_prompt = None
        try:
            await client.get_prompt("triage_new_feedback", {"board": "../x"})
        except Exception as ex:  # noqa: BLE001 - the SDK raises the server's JSON-RPC error
            bad_prompt = str(ex)
        bad_resources = []
        for uri in (f"feedback://{workspace.slug}/changelogs/not-an-id", f"feedback://{workspace.slug}/boards/Not%20A%20Slug"):
            try:
                await client.read_resource(uri)
            except Exception as ex:  # noqa: BLE001 - the SDK raises the server's JSON-RPC error
                bad_resources.append(str(ex))
        during = proxy.seen[before:]
        good = data(await client.call_tool("get_post", {"post_id": pid.upper()}))  # any case: the API's ids
        return refusals, bad_prompt, bad_resources, during, good

    try:
        refusals, bad_prompt, bad_resources, during, good = session("stdio", proxy.url, keys["manager"], steps)
    finally:
        proxy.close()
    for (name, args), (_, message) in zip(bad_calls, refusals):
        assert "validation error" in message and "pattern" in message, (name, args, message)
    assert bad_prompt and "board must match" in bad_prompt, bad_prompt
    assert len(bad_resources) == 2 and all("must match" in m for m in bad_resources), bad_resources
    assert during == [], f"refused input reached the API: {during}"
    assert good["post"]["id"] == pid and ("GET", f"/v1/workspaces/{workspace.slug}/posts/{pid.upper()}") in proxy.seen
    assert api.get(f"{workspace.path}/changelogs/{eid}", key=keys["manager"]).json()["title"] == "Draft"
    after = api.get(f"{workspace.path}/posts/{pid}", key=keys["manager"]).json()
    assert (after["title"], after["voteCount"], after["commentCount"]) == ("A post to aim at", 0, 0)


def test_an_escaped_segment_reaches_no_other_route(stack, api, workspace, keys):
    """The second line behind the patterns: a value escaped by ``service.segment`` stays one path
    segment through the API client and the gateway, however it is spelled. The control shows what
    it stops: the same value unescaped reaches the changelog route with the key."""
    from feedback_mcp.api import ApiClient, ApiError, WorkspaceApi
    from feedback_mcp.service import segment

    entry = api.post(f"{workspace.path}/changelogs", key=keys["manager"], json={"title": "Draft", "slug": "draft", "content": "x"}).json()
    read_title = lambda: api.get(f"{workspace.path}/changelogs/{entry['id']}", key=keys["manager"]).json()["title"]  # noqa: E731
    client = ApiClient(stack.url, timeout=30)
    as_manager = WorkspaceApi(client, keys["manager"], client.key_info(keys["manager"]))
    aimed = f"../changelogs/{entry['id']}"

    as_manager.patch(f"/posts/{aimed}", {"title": "Reached"})  # what a tool built before the patterns
    assert read_title() == "Reached"
    for value in (aimed, f"..%2Fchangelogs%2F{entry['id']}", "..", ".", f"x/../../changelogs/{entry['id']}"):
        with pytest.raises(ApiError) as refused:
            as_manager.patch(f"/posts/{segment(value)}", {"title": "Hijacked"})
        assert 400 <= refused.value.status < 500 and refused.value.status != 401, (value, refused.value.status)
    assert read_title() == "Reached", "no escaped value reached the entry"


def test_a_manager_agent_triages_and_works_the_duplicate_queue_and_a_read_key_sees_no_internal_field(stack, api, workspace, keys):
    r = api.put(f"{workspace.path}/triage", key=keys["manager"], json={
        "tags": [{"slug": "billing", "name": "Billing", "color": "#16a34a"}],
        "fields": [{"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3},
                   {"key": "platform", "name": "Platform", "type": "select", "options": ["ios", "web"], "public": True}],
        "scoreFormula": "votes * impact"})
    assert r.status_code == 200, r.text
    original = post_via_api(api, workspace, keys["write"], "Pay invoices by bank transfer", "SEPA transfer for invoices")
    duplicate = post_via_api(api, workspace, keys["write"], "Pay invoices with a bank transfer", "Bank transfer (SEPA) for invoices")

    async def as_manager(client):
        settings = data(await client.call_tool("get_triage_settings", {}))
        triaged = data(await client.call_tool("triage_post", {"post_id": original["id"], "eta": "2027-02", "tags": ["billing"],
                                                               "fields": {"impact": 3, "platform": "web"}}))
        bad_field = error(await client.call_tool("triage_post", {"post_id": original["id"], "fields": {"impact": 7}}))
        cleared = data(await client.call_tool("triage_post", {"post_id": original["id"], "clear": ["eta"]}))
        by_tag = data(await client.call_tool("list_posts", {"tags": ["billing"], "sort": "score"}))
        by_field = data(await client.call_tool("list_posts", {"fields": {"platform": "web"}}))
        for _ in range(100):  # the queue fills as the posts service compares the new post
            queue = data(await client.call_tool("list_suggestions", {}))
            if queue["items"]:
                break
            await anyio.sleep(0.3)
        accepted = data(await client.call_tool("accept_suggestion", {"suggestion_id": queue["items"][0]["id"]}))
        again = error(await client.call_tool("dismiss_suggestion", {"suggestion_id": queue["items"][0]["id"]}))
        return locals()

    m = session("http", stack.url, keys["manager"], as_manager)
    assert [f["key"] for f in m["settings"]["fields"]] == ["impact", "platform"] and m["settings"]["scoreFormula"] == "votes * impact"
    assert m["triaged"]["fields"] == {"impact": 3, "platform": "web"} and m["triaged"]["eta"] == "2027-02"
    assert "fields.impact" in m["bad_field"] and m["cleared"]["eta"] is None
    assert [p["id"] for p in m["by_tag"]["items"]] == [original["id"]] == [p["id"] for p in m["by_field"]["items"]]
    assert m["queue"]["items"][0]["post"]["id"] == duplicate["id"] and m["queue"]["items"][0]["into"]["id"] == original["id"]
    assert m["accepted"]["mergedInto"]["id"] == original["id"] and "(HTTP 409)" in m["again"]

    async def as_reader(client):
        return (data(await client.call_tool("get_post", {"post_id": original["id"]})),
                data(await client.call_tool("get_triage_settings", {})),
                error(await client.call_tool("list_posts", {"fields": {"impact": "3"}})))

    post, settings, refused = session("http", stack.url, keys["read"], as_reader)
    assert post["post"]["fields"] == {"platform": "web"} and "score" not in post["post"] and "owner" not in post["post"]
    assert [f["key"] for f in settings["fields"]] == ["platform"] and "scoreFormula" not in settings
    assert "(HTTP 400)" in refused
