"""Who may call what: every documented route, called as anonymous, end user, manager and
another workspace's manager. Manager-only routes refuse the first three roles; no route ever
answers 5xx or an error body other than {"error": "..."}."""

import re

import pytest

from testkit import assert_error, create_workspace

ZERO_ID = "000000000000000000000000"

# (method, path template) -> who may: "manager" (managers only), "public" (anyone),
# "operator" (the platform operator only), "key" (whoever presents a workspace API key, of
# any workspace: the key names it). Routes whose anonymous access depends on workspace
# flags are "participant": end users and managers may, anonymous callers per flag (off here).
ACCESS = {
    ("post", "/v1/workspaces"): "operator",
    ("get", "/v1/workspaces/{slug}"): "public",
    ("patch", "/v1/workspaces/{slug}"): "manager",
    ("get", "/v1/workspaces/{slug}/settings"): "manager",
    ("patch", "/v1/workspaces/{slug}/settings"): "manager",
    ("get", "/v1/workspaces/{slug}/branding"): "public",
    ("get", "/v1/workspaces/{slug}/logo"): "public",  # 404 without one, never refused
    ("put", "/v1/workspaces/{slug}/logo"): "manager",
    ("delete", "/v1/workspaces/{slug}/logo"): "manager",
    ("get", "/v1/workspaces/{slug}/agent-context"): "manager",
    ("get", "/v1/workspaces/{slug}/boards"): "public",
    ("post", "/v1/workspaces/{slug}/boards"): "manager",
    ("patch", "/v1/workspaces/{slug}/boards/{boardId}"): "manager",
    ("delete", "/v1/workspaces/{slug}/boards/{boardId}"): "manager",
    ("get", "/v1/workspaces/{slug}/statuses"): "public",
    ("post", "/v1/workspaces/{slug}/statuses"): "manager",
    ("patch", "/v1/workspaces/{slug}/statuses/{statusSlug}"): "manager",
    ("delete", "/v1/workspaces/{slug}/statuses/{statusSlug}"): "manager",
    ("get", "/v1/workspaces/{slug}/api-keys"): "manager",
    ("post", "/v1/workspaces/{slug}/api-keys"): "manager",
    ("delete", "/v1/workspaces/{slug}/api-keys/{keyId}"): "manager",
    ("get", "/v1/api-key"): "key",
    ("get", "/v1/workspaces/{slug}/changelogs"): "public",
    ("post", "/v1/workspaces/{slug}/changelogs"): "manager",
    ("get", "/v1/workspaces/{slug}/changelogs/{changelogId}"): "public",
    ("patch", "/v1/workspaces/{slug}/changelogs/{changelogId}"): "manager",
    ("get", "/v1/openapi.json"): "public",
    ("get", "/v1"): "public",  # the API's index
    # posts: reading is public (non-managers see approved posts); writing needs an identity
    ("get", "/v1/workspaces/{slug}/posts"): "public",
    ("post", "/v1/workspaces/{slug}/posts"): "participant",
    ("get", "/v1/workspaces/{slug}/posts/search"): "public",
    ("get", "/v1/workspaces/{slug}/posts/stats"): "public",
    ("get", "/v1/workspaces/{slug}/posts/activity"): "manager",  # daily counts, private comments too
    ("get", "/v1/workspaces/{slug}/posts/{postId}"): "public",
    # the team edits and triages any post; its author edits its title and content, and deletes
    # it, within a window (test_delete_edit.py); anonymous callers: 401
    ("patch", "/v1/workspaces/{slug}/posts/{postId}"): "participant",
    ("delete", "/v1/workspaces/{slug}/posts/{postId}"): "participant",
    ("post", "/v1/workspaces/{slug}/posts/{postId}/merge"): "manager",
    ("post", "/v1/workspaces/{slug}/posts/{postId}/unmerge"): "manager",
    ("post", "/v1/workspaces/{slug}/posts/{postId}/vote"): "participant",
    ("delete", "/v1/workspaces/{slug}/posts/{postId}/vote"): "participant",
    ("get", "/v1/workspaces/{slug}/posts/{postId}/history"): "public",
    ("get", "/v1/workspaces/{slug}/posts/{postId}/comments"): "public",
    ("post", "/v1/workspaces/{slug}/posts/{postId}/comments"): "participant",
    ("patch", "/v1/workspaces/{slug}/posts/{postId}/comments/{commentId}"): "participant",
    ("delete", "/v1/workspaces/{slug}/posts/{postId}/comments/{commentId}"): "participant",
    ("get", "/v1/workspaces/{slug}/roadmap"): "public",
    # the voters behind a post, and votes on someone's behalf, are the team's (a write key may
    # add votes on behalf too: test_revenue.py)
    ("get", "/v1/workspaces/{slug}/posts/{postId}/votes"): "manager",
    ("post", "/v1/workspaces/{slug}/posts/{postId}/votes"): "manager",
    # triage: the tags and public fields are everyone's (the board shows them); the settings and
    # the suggested-duplicate queue are the team's
    ("get", "/v1/workspaces/{slug}/triage"): "public",
    ("put", "/v1/workspaces/{slug}/triage"): "manager",
    ("post", "/v1/workspaces/{slug}/triage/preview"): "manager",
    ("get", "/v1/workspaces/{slug}/suggestions"): "manager",
    ("post", "/v1/workspaces/{slug}/suggestions/{suggestionId}/accept"): "manager",
    ("post", "/v1/workspaces/{slug}/suggestions/{suggestionId}/dismiss"): "manager",
    # companies: the team's only
    ("get", "/v1/workspaces/{slug}/companies"): "manager",
    ("get", "/v1/workspaces/{slug}/companies/{companyId}"): "manager",
    ("put", "/v1/workspaces/{slug}/companies/{companyId}"): "manager",
    ("delete", "/v1/workspaces/{slug}/companies/{companyId}"): "manager",
    ("get", "/v1/workspaces/{slug}/companies/{companyId}/members"): "manager",
    ("post", "/v1/workspaces/{slug}/companies/{companyId}/members"): "manager",
    ("delete", "/v1/workspaces/{slug}/companies/{companyId}/members/{userId}"): "manager",
    # webhooks
    ("get", "/v1/workspaces/{slug}/webhooks"): "manager",
    ("post", "/v1/workspaces/{slug}/webhooks"): "manager",
    ("get", "/v1/workspaces/{slug}/webhooks/event-types"): "manager",
    ("get", "/v1/workspaces/{slug}/webhooks/{webhookId}"): "manager",
    ("patch", "/v1/workspaces/{slug}/webhooks/{webhookId}"): "manager",
    ("delete", "/v1/workspaces/{slug}/webhooks/{webhookId}"): "manager",
    ("post", "/v1/workspaces/{slug}/webhooks/{webhookId}/rotate-secret"): "manager",
    ("post", "/v1/workspaces/{slug}/webhooks/{webhookId}/test"): "manager",
    ("get", "/v1/workspaces/{slug}/webhooks/{webhookId}/deliveries"): "manager",
    ("get", "/v1/workspaces/{slug}/webhooks/{webhookId}/deliveries/{deliveryId}"): "manager",
    ("post", "/v1/workspaces/{slug}/webhooks/{webhookId}/deliveries/{deliveryId}/resend"): "manager",
    # domains
    ("get", "/v1/workspaces/{slug}/domain"): "manager",
    ("put", "/v1/workspaces/{slug}/domain"): "manager",
    ("delete", "/v1/workspaces/{slug}/domain"): "manager",
    ("post", "/v1/workspaces/{slug}/domain/verify"): "manager",
    # portability: exports are the team's
    ("get", "/v1/workspaces/{slug}/exports"): "manager",
    ("post", "/v1/workspaces/{slug}/exports"): "manager",
    ("get", "/v1/workspaces/{slug}/exports/{exportId}"): "manager",
    ("get", "/v1/workspaces/{slug}/exports/{exportId}/download"): "manager",
    # ... and so are imports
    ("get", "/v1/workspaces/{slug}/imports"): "manager",
    ("post", "/v1/workspaces/{slug}/imports"): "manager",
    ("get", "/v1/workspaces/{slug}/imports/{importId}"): "manager",
    # people: "self" needs an identity of one's own (anonymous: 401); signing in is public; the
    # team and the audit log are managers' (owners' changes: a manager key acts as an owner)
    ("get", "/v1/me"): "self",
    ("get", "/v1/workspaces/{slug}/me"): "self",
    ("patch", "/v1/me"): "self",
    ("post", "/v1/me/sign-out"): "self",
    ("post", "/v1/me/sign-out-everywhere"): "self",
    ("get", "/v1/me/data"): "self",
    ("delete", "/v1/me/data"): "self",
    ("get", "/v1/workspaces/{slug}/users/{userId}/data"): "manager",  # an owner's (a manager key acts as one)
    ("delete", "/v1/workspaces/{slug}/users/{userId}/data"): "manager",
    ("post", "/v1/workspaces/{slug}/sessions"): "self",
    ("post", "/v1/workspaces/{slug}/sign-in/email"): "public",
    ("post", "/v1/workspaces/{slug}/sign-in/email/redeem"): "public",
    ("get", "/v1/workspaces/{slug}/sign-in-settings"): "public",
    ("patch", "/v1/workspaces/{slug}/sign-in-settings"): "manager",
    ("get", "/v1/workspaces/{slug}/members"): "manager",
    ("post", "/v1/workspaces/{slug}/members"): "manager",
    ("patch", "/v1/workspaces/{slug}/members/{personId}"): "manager",
    ("delete", "/v1/workspaces/{slug}/members/{personId}"): "manager",
    ("get", "/v1/workspaces/{slug}/invitations"): "manager",
    ("post", "/v1/workspaces/{slug}/invitations/accept"): "public",
    ("delete", "/v1/workspaces/{slug}/invitations/{invitationId}"): "manager",
    ("get", "/v1/workspaces/{slug}/audit-log"): "manager",
    ("post", "/v1/workspaces/{slug}/passkeys/registration-options"): "self",
    ("get", "/v1/workspaces/{slug}/passkeys"): "self",
    ("post", "/v1/workspaces/{slug}/passkeys"): "self",
    ("delete", "/v1/workspaces/{slug}/passkeys/{passkeyId}"): "self",
    ("post", "/v1/workspaces/{slug}/sign-in/passkey/options"): "public",
    ("post", "/v1/workspaces/{slug}/sign-in/passkey"): "public",
    ("get", "/v1/workspaces/{slug}/oidc"): "manager",
    ("put", "/v1/workspaces/{slug}/oidc"): "manager",
    ("delete", "/v1/workspaces/{slug}/oidc"): "manager",
    ("post", "/v1/workspaces/{slug}/sign-in/oidc"): "public",
    ("post", "/v1/workspaces/{slug}/sign-in/oidc/callback"): "public",
    # notifications: following and preferences are a signed-in person's own (anyone else: 401 or
    # 403); unsubscribing takes a mail's signed token, no sign-in; delivery is the team's
    ("get", "/v1/workspaces/{slug}/posts/{postId}/follow"): "self",
    ("put", "/v1/workspaces/{slug}/posts/{postId}/follow"): "self",
    ("get", "/v1/workspaces/{slug}/me/notifications"): "self",
    ("get", "/v1/workspaces/{slug}/me/changelog-seen"): "self",
    ("put", "/v1/workspaces/{slug}/me/changelog-seen"): "self",
    ("patch", "/v1/workspaces/{slug}/me/notifications"): "self",
    ("post", "/v1/workspaces/{slug}/notifications/unsubscribe"): "public",
    ("get", "/v1/workspaces/{slug}/notifications/delivery"): "manager",
    ("get", "/v1/workspaces/{slug}/notifications/suppressions"): "manager",
    ("delete", "/v1/workspaces/{slug}/notifications/suppressions/{address}"): "manager",
    # the changelog by email: anyone subscribes an address, confirms or leaves by a mail's token;
    # a signed-in person's own address is theirs; the list of addresses is the team's
    ("post", "/v1/workspaces/{slug}/changelog/subscriptions"): "public",
    ("get", "/v1/workspaces/{slug}/changelog/subscriptions"): "manager",
    ("post", "/v1/workspaces/{slug}/changelog/subscriptions/confirm"): "public",
    ("post", "/v1/workspaces/{slug}/changelog/subscriptions/unsubscribe"): "public",
    ("get", "/v1/workspaces/{slug}/me/changelog-subscription"): "self",
    ("put", "/v1/workspaces/{slug}/me/changelog-subscription"): "self",
}


def documented_routes(api):
    doc = api.get("/openapi.json").json()
    return sorted((m, p) for p, ops in doc["paths"].items() for m in ops if m != "parameters")


@pytest.fixture(scope="module")
def roles(api, admin_token):
    ws = create_workspace(api, admin_token)
    other = create_workspace(api, admin_token)
    return ws, {"anonymous": {}, "user": {"user": ws.user_token("matrix-user")}, "manager": {"key": ws.key}, "other": {"key": other.key}}


def fill(template: str, slug: str) -> str:
    path = template.replace("{slug}", slug).removeprefix("/v1")
    return re.sub(r"\{[^}]+\}", ZERO_ID, path)


def test_every_route_is_in_the_matrix(api):
    missing = [r for r in documented_routes(api) if r not in ACCESS]
    assert missing == [], "add these routes to ACCESS"


def test_roles_on_every_route(api, roles):
    ws, callers = roles
    problems = []
    for method, template in documented_routes(api):
        access = ACCESS.get((method, template))
        for role, creds in callers.items():
            r = api.call(method.upper(), fill(template, ws.slug), json={} if method in ("post", "patch", "put") else None, **creds)
            if r.status_code >= 500:
                problems.append(f"{role} {method} {template}: {r.status_code}")
                continue
            # {"error"}, and a refusal by the schema check (400, 413) also lists its "errors".
            shapes = [{"error", "code"}, {"error", "code", "errors"}] if r.status_code in (400, 413) else [{"error", "code"}]
            if r.status_code >= 400 and set(r.json()) not in shapes:
                problems.append(f"{role} {method} {template}: error body {r.text[:80]}")
            refused = r.status_code in (401, 403)
            if access == "self":
                if role == "anonymous" and r.status_code != 401:
                    problems.append(f"anonymous {method} {template}: {r.status_code}, expected 401")
                continue
            if access == "key":
                expected = {"anonymous": 401, "user": 403}.get(role, 200)
                if r.status_code != expected:
                    problems.append(f"{role} {method} {template}: {r.status_code}, expected {expected}")
                continue
            if access in ("manager", "operator") and role != "manager" or access == "operator":
                expected = {"anonymous": 401}.get(role, 403)
                if r.status_code != expected:
                    problems.append(f"{role} {method} {template}: {r.status_code}, expected {expected}")
            elif access == "manager" and role == "manager" and refused:
                problems.append(f"manager refused on {method} {template}: {r.status_code}")
            elif access == "public" and role != "other" and refused:
                problems.append(f"{role} refused on public {method} {template}: {r.status_code}")
            elif access == "participant" and role in ("user", "manager") and refused:
                problems.append(f"{role} refused on {method} {template}: {r.status_code}")
            elif access == "participant" and role == "anonymous" and r.status_code not in (401, 404):
                problems.append(f"anonymous allowed on {method} {template} with anon flags off: {r.status_code}")
    assert problems == []


def test_scoped_api_keys(api, workspace, other_workspace):
    """A 'read' key reads what any visitor may and is refused every write; a 'write' key submits,
    votes and comments as an identified agent but manages nothing; another workspace's scoped
    key is refused; existing keys stay managers."""
    ws = workspace
    ws.board("features", "Features")
    keys = {}
    for role in ("read", "write"):
        r = api.post(f"{ws.path}/api-keys", key=ws.key, json={"name": f"agent-{role}", "role": role})
        assert r.status_code == 201 and r.json()["role"] == role, r.text
        keys[role] = r.json()["key"]
    assert api.get(f"{ws.path}/api-keys", key=ws.key).json()["items"][0]["role"] == "manager", "the first key stays a manager"
    hidden = api.post(f"{ws.path}/posts", key=ws.key, json={"boardSlug": "features", "title": "Hidden", "content": "x"}).json()
    api.patch(f"{ws.path}/posts/{hidden['id']}", key=ws.key, json={"moderationState": "pending"})

    read = keys["read"]
    assert api.get(f"{ws.path}/posts", key=read).status_code == 200
    assert hidden["id"] not in api.get(f"{ws.path}/posts", key=read).text, "no manager visibility"
    assert_error(api.get(f"{ws.path}/settings", key=read), 403)  # no secrets
    for method, path, body in (
        ("post", "/posts", {"boardSlug": "features", "title": "t", "content": "x"}),
        ("post", f"/posts/{hidden['id']}/vote", None),
        ("patch", f"/posts/{hidden['id']}", {"statusSlug": "planned"}),
        ("post", "/api-keys", {"name": "escalate"}),
    ):
        message = assert_error(api.call(method.upper(), ws.path + path, key=read, json=body), 403)
        assert "only read" in message

    write = keys["write"]
    post = api.post(f"{ws.path}/posts", key=write, json={"boardSlug": "features", "title": "From an agent", "content": "x"})
    assert post.status_code == 201 and post.json()["verified"] is True, post.text
    assert api.post(f"{ws.path}/posts/{post.json()['id']}/vote", key=write).status_code == 201
    assert api.post(f"{ws.path}/posts/{post.json()['id']}/comments", key=write, json={"content": "+1"}).status_code == 201
    assert_error(api.patch(f"{ws.path}/posts/{post.json()['id']}", key=write, json={"statusSlug": "planned"}), 403)
    assert_error(api.get(f"{ws.path}/settings", key=write), 403)
    assert_error(api.get(f"{other_workspace.path}/posts", key=write), 403)
    assert_error(api.post(f"{ws.path}/api-keys", key=ws.key, json={"name": "x", "role": "owner"}), 400)
