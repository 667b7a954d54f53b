"""The workspaces service through the gateway: shapes, status codes and error bodies of its routes."""

import json
import time
import uuid
from datetime import datetime, timedelta, timezone

import jwt
import pytest
import requests
from pymongo import MongoClient

from common import auth
from common.config import load_settings
from common import i18n
from common.kafka import make_consumer
from testkit import assert_error, create_workspace, unique_slug, wait_for

SETTINGS_FIELDS = {
    "logo": (str, type(None)),
    "primaryColor": str,
    "theme": str,
    "hidePoweredBy": bool,
    "anonSubmit": bool,
    "anonVote": bool,
    "anonComment": bool,
    "authorVotes": bool,
    "hideCustomerNames": bool,
    "erasedUserContent": str,
    "widgetOrigins": list,
    "widgetPosition": str,
    "widgetLabel": str,
    "defaultLocale": str,
    "locales": list,
    "brandVoice": str,
    "ssoSecret": (str, type(None)),
    "ssoRequireAud": bool,
}


# -- creating workspaces ---------------------------------------------------------------


def test_create_workspace_returns_key_once_and_defaults(api, admin_token):
    slug = unique_slug()
    r = api.post("/workspaces", key=admin_token, json={"slug": slug, "name": "Acme"})
    assert r.status_code == 201
    body = r.json()
    assert body["workspace"]["slug"] == slug and body["workspace"]["name"] == "Acme"
    assert body["apiKey"].startswith("fbk_")
    statuses = api.get(f"/workspaces/{slug}/statuses").json()["items"]
    assert [s["slug"] for s in statuses] == ["open", "under-review", "planned", "in-progress", "complete", "closed"]
    assert all(s["color"].startswith("#") for s in statuses)
    keys = api.get(f"/workspaces/{slug}/api-keys", key=body["apiKey"]).json()["items"]
    assert len(keys) == 1 and "key" not in keys[0] and "hash" not in keys[0]
    assert body["apiKey"] not in str(keys)


def test_create_workspace_errors(api, admin_token, workspace):
    assert_error(api.post("/workspaces", key=admin_token, json={"slug": workspace.slug, "name": "x"}), 409)
    assert_error(api.post("/workspaces", key=admin_token, json={"slug": "Bad Slug!", "name": "x"}), 400)
    assert_error(api.post("/workspaces", key=admin_token, json={"name": "x"}), 400)
    assert_error(api.post("/workspaces", json={"slug": unique_slug(), "name": "x"}), 401)
    assert_error(api.post("/workspaces", key=workspace.key, json={"slug": unique_slug(), "name": "x"}), 403)
    # A token that is neither the operator's nor a key is no credential at all, as on every route.
    assert_error(api.post("/workspaces", key="wrong-token", json={"slug": unique_slug(), "name": "x"}), 401)


# -- settings --------------------------------------------------------------------------


def test_settings_patch_returns_every_field(api, workspace):
    r = api.patch(
        f"{workspace.path}/settings",
        key=workspace.key,
        json={
            "primaryColor": "#ff0066",
            "theme": "dark",
            "hidePoweredBy": True,
            "anonSubmit": True,
            "anonVote": True,
            "anonComment": False,
            "authorVotes": False,
            "brandVoice": "Friendly and brief.",
            "ssoSecret": "a-very-long-shared-secret-of-32-chars-or-more",
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == set(SETTINGS_FIELDS)
    for name, kind in SETTINGS_FIELDS.items():
        assert isinstance(body[name], kind), name
    assert body["primaryColor"] == "#ff0066" and body["theme"] == "dark" and body["hidePoweredBy"] is True
    assert body["authorVotes"] is False
    assert body["ssoSecret"] == "a-very-long-shared-secret-of-32-chars-or-more"
    again = api.get(f"{workspace.path}/settings", key=workspace.key).json()
    assert again == body


def test_settings_partial_patch_keeps_other_fields(api, workspace):
    workspace.settings(primaryColor="#123456")
    body = workspace.settings(theme="system")
    assert body["primaryColor"] == "#123456" and body["theme"] == "system"
    assert body["authorVotes"] is True, "on unless the team turns it off"


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"primaryColor": "red"}, "primaryColor"),
        ({"theme": "neon"}, "theme"),
        ({"hidePoweredBy": "yes"}, "hidePoweredBy"),
        ({"anonVote": 1}, "anonVote"),
        ({"authorVotes": "true"}, "authorVotes"),
        ({"brandVoice": "x" * 2001}, "brandVoice"),
        ({"ssoSecret": "short"}, "ssoSecret"),
        ({"logo": "https://example.com/logo.png"}, "logo"),
        ({"colour": "#fff"}, "colour"),
    ],
)
def test_settings_validation_names_the_field(api, workspace, payload, field):
    r = api.patch(f"{workspace.path}/settings", key=workspace.key, json=payload)
    assert_error(r, 400)
    assert field in r.json()["error"]


def test_settings_bad_bodies(api, workspace):
    h = {"Content-Type": "application/json"}
    assert_error(api.patch(f"{workspace.path}/settings", key=workspace.key, data="{not json", headers=h), 400)
    assert_error(api.patch(f"{workspace.path}/settings", key=workspace.key, json=[1, 2]), 400)
    assert_error(api.patch(f"{workspace.path}/settings", key=workspace.key, data="[" * 5000 + "]" * 5000, headers=h), 400)


def test_settings_unknown_workspace_and_roles(api, workspace, other_workspace):
    assert_error(api.patch("/workspaces/no-such-ws/settings", key=workspace.key, json={"theme": "dark"}), 403)
    assert_error(api.patch(f"{workspace.path}/settings", json={"theme": "dark"}), 401)
    assert_error(api.patch(f"{workspace.path}/settings", key=other_workspace.key, json={"theme": "dark"}), 403)
    user = workspace.user_token("u1", aud=workspace.slug)
    assert_error(api.patch(f"{workspace.path}/settings", user=user, json={"theme": "dark"}), 403)
    assert_error(api.get(f"{workspace.path}/settings", user=user), 403)


def test_unknown_workspace_is_404(api, admin_token):
    assert_error(api.patch("/workspaces/no-such-ws/settings", key=admin_token, json={"theme": "dark"}), 404)
    assert_error(api.get("/workspaces/no-such-ws/branding"), 404)
    assert_error(api.get("/workspaces/no-such-ws/agent-context", key=admin_token), 404)


# -- branding --------------------------------------------------------------------------


def test_branding_is_public_and_hides_secrets(api, workspace):
    workspace.settings(primaryColor="#abcdef", theme="dark", hidePoweredBy=True, ssoSecret="another-long-secret-value-of-32-chars-or-more")
    r = api.get(f"{workspace.path}/branding")
    assert r.status_code == 200
    body = r.json()
    assert body == {
        "workspace": {"slug": workspace.slug, "name": "Acme", "logo": None},
        "primaryColor": "#abcdef",
        "theme": "dark",
        "hidePoweredBy": True,
        "customDomain": None,
        # What the embeddable widget needs of the workspace, read as nobody (services/widget).
        "widgetOrigins": [],
        "widgetPosition": "bottom-right",
        "widgetLabel": "Feedback",
        # Which language a page, the widget or a mail speaks (docs/languages.md).
        "defaultLocale": "en",
        "locales": list(i18n.LOCALES),
    }
    assert "another-long-secret-value-of-32-chars-or-more" not in r.text


def test_languages_are_the_enabled_set_and_a_default_among_them(api, workspace):
    settings = f"{workspace.path}/settings"
    r = api.patch(settings, key=workspace.key, json={"locales": ["en", "ja", "ar"], "defaultLocale": "ja"})
    assert r.status_code == 200 and (r.json()["locales"], r.json()["defaultLocale"]) == (["en", "ja", "ar"], "ja"), r.text
    branding = api.get(f"{workspace.path}/branding").json()
    assert (branding["locales"], branding["defaultLocale"]) == (["en", "ja", "ar"], "ja")
    # A default that is not enabled, as the change would leave them, is refused with its code.
    refused = api.patch(settings, key=workspace.key, json={"locales": ["en", "ar"]})
    assert_error(refused, 400) and refused.json()["code"] == "locale_not_enabled"
    refused = api.patch(settings, key=workspace.key, json={"defaultLocale": "de"})
    assert refused.json()["code"] == "locale_not_enabled" and refused.json()["errors"][0]["field"] == "defaultLocale"
    unknown = api.patch(settings, key=workspace.key, json={"locales": ["en", "klingon"]})
    assert_error(unknown, 400) and unknown.json()["errors"][0]["code"] == "not_allowed"
    assert_error(api.patch(settings, key=workspace.key, json={"locales": []}), 400)
    assert api.get(settings, key=workspace.key).json()["locales"] == ["en", "ja", "ar"]  # nothing refused was kept


def test_logo_is_set_on_the_workspace_not_in_settings(api, workspace):
    r = api.patch(workspace.path, key=workspace.key, json={"logo": "https://cdn.example.com/acme.png", "name": "Acme Inc"})
    assert r.status_code == 200, r.text
    branding = api.get(f"{workspace.path}/branding").json()
    assert branding["workspace"] == {"slug": workspace.slug, "name": "Acme Inc", "logo": "https://cdn.example.com/acme.png"}
    assert api.get(f"{workspace.path}/settings", key=workspace.key).json()["logo"] == "https://cdn.example.com/acme.png"
    assert_error(api.patch(workspace.path, key=workspace.key, json={"logo": "javascript:alert(1)"}), 400)


# -- boards and statuses ---------------------------------------------------------------


def test_boards(api, workspace):
    board = workspace.board("features", "Feature requests")
    assert set(board) == {"id", "slug", "name", "description", "position", "archived", "createdAt"} and len(board["id"]) == 24
    assert api.get(f"{workspace.path}/boards").json()["items"] == [board]
    assert_error(api.post(f"{workspace.path}/boards", key=workspace.key, json={"slug": "features", "name": "again"}), 409)
    assert_error(api.post(f"{workspace.path}/boards", key=workspace.key, json={"slug": "UPPER", "name": "x"}), 400)
    assert_error(api.post(f"{workspace.path}/boards", json={"slug": "bugs", "name": "Bugs"}), 401)


def test_statuses_add_reorder_and_patch(api, workspace):
    r = api.post(f"{workspace.path}/statuses", key=workspace.key, json={"slug": "shipped", "name": "Shipped", "color": "#0f0", "order": 1})
    assert r.status_code == 201, r.text
    assert r.json() == {"slug": "shipped", "name": "Shipped", "color": "#0f0", "order": 1, "roadmap": True, "closed": False}
    r = api.patch(f"{workspace.path}/statuses/shipped", key=workspace.key, json={"order": 6, "roadmap": False, "name": "Released"})
    assert r.status_code == 200, r.text
    slugs = [s["slug"] for s in api.get(f"{workspace.path}/statuses").json()["items"]]
    assert slugs == ["open", "under-review", "planned", "in-progress", "complete", "closed", "shipped"]
    assert_error(api.post(f"{workspace.path}/statuses", key=workspace.key, json={"slug": "open", "name": "x", "color": "#000"}), 409)
    assert_error(api.patch(f"{workspace.path}/statuses/nope", key=workspace.key, json={"name": "x"}), 404)
    assert_error(api.patch(f"{workspace.path}/statuses/open", key=workspace.key, json={"color": "blue"}), 400)


# -- API keys ------------------------------------------------------------------------


def test_api_keys_create_use_revoke(api, workspace):
    r = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": "CI"})
    assert r.status_code == 201
    new_key = r.json()["key"]
    assert api.get(f"{workspace.path}/settings", key=new_key).status_code == 200
    r = api.delete(f"{workspace.path}/api-keys/{r.json()['id']}", key=workspace.key)
    assert r.status_code == 200 and r.json()["revokedAt"] is not None
    assert_error(api.delete(f"{workspace.path}/api-keys/nope", key=workspace.key), 404)


def test_key_and_settings_events_name_the_person_or_key_who_acted(api, stack, workspace):
    """A signed-in team member (a person, as the gateway forwards one, signed) makes and revokes
    a key and changes a setting; the workspace's key changes another: each event names who."""
    ada = auth.Caller(kind=auth.MANAGER, workspace=workspace.slug, user_id="person:5f0c3a9e2b7d4c1a8e6f0b2d",
                      name="Ada Lovelace", email="ada@example.com", role=auth.OWNER)

    def as_ada(method, path, body=None):
        payload = json.dumps(body).encode() if body is not None else None
        path = f"/v1{workspace.path}{path}"
        headers = {**auth.signed_headers(stack.internal_secret, "workspaces", method, path, "", payload, ada), "Content-Type": "application/json"}
        return requests.request(method, stack.service_url("workspaces") + path, data=payload, headers=headers, timeout=30)

    made = as_ada("POST", "/api-keys", {"name": "CI"})
    assert made.status_code == 201, made.text
    assert as_ada("DELETE", f"/api-keys/{made.json()['id']}").status_code == 200
    assert as_ada("PATCH", "/settings", {"theme": "dark"}).status_code == 200
    workspace.settings(anonVote=True)
    key = api.get("/api-key", key=workspace.key).json()

    wanted = {"api_key.created", "api_key.revoked", "workspace.settings_changed"}
    consumer = make_consumer(load_settings({"KAFKA_BOOTSTRAP_SERVERS": stack.kafka_bootstrap}), f"test-{uuid.uuid4().hex}", ["feedback.workspaces"])
    seen = []

    def all_came():
        for records in consumer.poll(timeout_ms=500).values():
            seen.extend(e for e in (json.loads(r.value) for r in records) if e["workspace"] == workspace.slug and e["type"] in wanted)
        return len([e for e in seen if e["type"] == "workspace.settings_changed"]) == 2 and wanted <= {e["type"] for e in seen}

    try:
        wait_for(all_came, timeout=60, what=f"{sorted(wanted)} of {workspace.slug}")
    finally:
        consumer.close()
    by_ada = {"id": ada.user_id, "name": "Ada Lovelace"}
    data = [(e["type"], e["data"]) for e in seen]
    created = [d for t, d in data if t == "api_key.created" and d["id"] == made.json()["id"]]
    assert created == [{"id": made.json()["id"], "name": "CI", "role": "manager", "expiresAt": None, "actor": by_ada}]
    assert [d for t, d in data if t == "api_key.revoked"] == [{"id": made.json()["id"], "name": "CI", "actor": by_ada}]
    assert [d for t, d in data if t == "workspace.settings_changed"] == [
        {"fields": ["theme"], "actor": by_ada},
        {"fields": ["anonVote"], "actor": {"id": f"key:{key['id']}", "name": key["name"]}},
    ]


def test_revoked_key_is_refused_once_the_cache_expires(api, admin_token, stack):
    ws = create_workspace(api, admin_token)
    r = api.post(f"{ws.path}/api-keys", key=ws.key, json={"name": "temp"})
    key_id, key = r.json()["id"], r.json()["key"]
    api.delete(f"{ws.path}/api-keys/{key_id}", key=ws.key)
    from testkit import wait_for

    wait_for(lambda: api.get(f"{ws.path}/settings", key=key).status_code == 401, timeout=30, what="revocation")


def test_bad_credentials(api, workspace):
    assert_error(api.get(f"{workspace.path}/settings", key="fbk_0000000000000000_nope"), 401)
    assert_error(api.get(f"{workspace.path}/settings", headers={"Authorization": "Basic abc"}), 401)
    assert_error(api.get(f"{workspace.path}/settings", user="not-a-jwt"), 401)


# -- changelogs -------------------------------------------------------------------------

CHANGELOG_FIELDS = {"id", "title", "slug", "content", "publishedAt", "postIds", "createdAt"}


def test_changelog_draft_then_publish(api, workspace):
    r = api.post(f"{workspace.path}/changelogs", key=workspace.key, json={"title": "Dark mode", "slug": "dark-mode", "content": "# Dark\n*now*"})
    assert r.status_code == 201, r.text
    entry = r.json()
    assert set(entry) == CHANGELOG_FIELDS
    assert entry["publishedAt"] is None and entry["postIds"] == [] and entry["content"] == "# Dark\n*now*"
    # drafts are invisible to everyone but managers
    assert api.get(f"{workspace.path}/changelogs/{entry['id']}").status_code == 404
    assert api.get(f"{workspace.path}/changelogs").json()["items"] == []
    assert api.get(f"{workspace.path}/changelogs", key=workspace.key).json()["items"][0]["id"] == entry["id"]

    r = api.patch(f"{workspace.path}/changelogs/{entry['id']}", key=workspace.key, json={"publish": True, "title": "Dark mode is here"})
    assert r.status_code == 200, r.text
    published = r.json()
    assert published["publishedAt"] is not None and published["title"] == "Dark mode is here"
    again = api.patch(f"{workspace.path}/changelogs/{entry['id']}", key=workspace.key, json={"publish": True}).json()
    assert again["publishedAt"] == published["publishedAt"], "publishedAt is set once"
    assert api.get(f"{workspace.path}/changelogs/{entry['id']}").json() == again
    assert_error(api.patch(f"{workspace.path}/changelogs/{entry['id']}", key=workspace.key, json={"publish": False}), 409)


def test_changelog_published_at_creation(api, workspace):
    r = api.post(f"{workspace.path}/changelogs", key=workspace.key, json={"title": "T", "slug": "t", "content": "c", "publish": True})
    assert r.status_code == 201 and r.json()["publishedAt"] is not None


def test_changelog_errors(api, workspace, other_workspace):
    base = f"{workspace.path}/changelogs"
    ok = {"title": "T", "slug": "dup", "content": "c"}
    assert api.post(base, key=workspace.key, json=ok).status_code == 201
    assert_error(api.post(base, key=workspace.key, json=ok), 409)
    assert_error(api.post(base, key=workspace.key, json={"title": "T", "content": "c"}), 400)
    assert_error(api.post(base, key=workspace.key, json={**ok, "slug": "x", "postIds": "abc"}), 400)
    assert_error(api.post(base, key=workspace.key, json={**ok, "slug": "y", "publish": "yes"}), 400)
    assert_error(api.post(base, json={**ok, "slug": "z"}), 401)
    assert_error(api.post(base, key=other_workspace.key, json={**ok, "slug": "z"}), 403)
    assert_error(api.patch(f"{base}/000000000000000000000000", key=workspace.key, json={"title": "x"}), 404)
    assert_error(api.patch(f"{base}/not-an-id", key=workspace.key, json={"title": "x"}), 404)
    entry = api.get(base, key=workspace.key).json()["items"][0]
    assert_error(api.patch(f"{base}/{entry['id']}", key=workspace.key, json={"title": ""}), 400)
    assert_error(api.patch(f"{base}/{entry['id']}", json={"title": "x"}), 401)
    assert_error(api.get(f"{base}?limit=0"), 400)


# -- agent context ----------------------------------------------------------------------


def test_agent_context(api, workspace):
    workspace.settings(brandVoice="Warm, plain words.", ssoSecret="a-secret-that-is-long-enough-for-hs256-tokens")
    board = workspace.board("ideas", "Ideas")
    for i in range(7):
        api.post(f"{workspace.path}/changelogs", key=workspace.key, json={"title": f"v{i}", "slug": f"v{i}", "content": f"notes {i}", "publish": True})
    api.post(f"{workspace.path}/changelogs", key=workspace.key, json={"title": "draft", "slug": "draft", "content": "secret draft"})
    r = api.get(f"{workspace.path}/agent-context", key=workspace.key)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"workspace", "brandVoice", "boards", "statuses", "recentChangelogs"}
    assert body["workspace"] == {"slug": workspace.slug, "name": "Acme"}
    assert body["brandVoice"] == "Warm, plain words."
    assert body["boards"] == [board]
    assert body["statuses"][0] == {"slug": "open", "name": "Open", "color": "#64748b"}
    assert [c["title"] for c in body["recentChangelogs"]] == ["v6", "v5", "v4", "v3", "v2"]
    assert body["recentChangelogs"][0] == {"title": "v6", "content": "notes 6"}
    assert "secret draft" not in r.text and "a-secret-that-is-long-enough-for-hs256-tokens" not in r.text


def test_agent_context_errors(api, workspace, other_workspace):
    assert_error(api.get(f"{workspace.path}/agent-context"), 401)
    assert_error(api.get(f"{workspace.path}/agent-context", key=other_workspace.key), 403)


# -- the presented API key --------------------------------------------------------------


@pytest.mark.parametrize("role", ["manager", "write", "read"])
def test_api_key_names_its_workspace_and_role(api, workspace, role):
    r = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": f"agent {role}", "role": role})
    assert r.status_code == 201, r.text
    created = r.json()
    r = api.get("/api-key", key=created["key"])
    assert r.status_code == 200, r.text
    assert r.json() == {
        "workspace": workspace.slug,
        "id": created["id"],
        "name": f"agent {role}",
        "role": role,
        "prefix": created["prefix"],
        "createdAt": created["createdAt"],
        "revokedAt": None,
        "expiresAt": None,
        "parentKeyId": api.get("/api-key", key=workspace.key).json()["id"],
        "lastUsedAt": r.json()["lastUsedAt"],
    }
    assert created["lastUsedAt"] is None and r.json()["lastUsedAt"] >= created["createdAt"]  # this very call used it


def test_api_key_refuses_what_is_not_a_workspace_key(api, admin_token, workspace):
    assert_error(api.get("/api-key"), 401)
    assert_error(api.get("/api-key", key="fbk_0123456789abcdef_not-a-real-key"), 401)
    assert_error(api.get("/api-key", key=admin_token), 401)  # the operator's token names no workspace
    assert_error(api.get("/api-key", user=workspace.user_token()), 403)
    r = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": "soon revoked", "role": "read"}).json()
    assert api.delete(f"{workspace.path}/api-keys/{r['id']}", key=workspace.key).status_code == 200
    assert_error(api.get("/api-key", key=r["key"]), 401)


# -- grants: short-lived keys derived from a key --------------------------------------------


def test_a_grant_through_the_gateway_then_401_once_expired(api, stack, workspace):
    r = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": "board session", "expiresInSeconds": 60})
    assert r.status_code == 201, r.text
    grant = r.json()
    assert set(grant) == {"id", "name", "role", "prefix", "createdAt", "revokedAt", "expiresAt", "parentKeyId", "lastUsedAt",
                          "key"}
    parent = api.get("/api-key", key=workspace.key).json()
    assert grant["parentKeyId"] == parent["id"] and grant["role"] == "manager"
    ends = datetime.fromisoformat(grant["expiresAt"].replace("Z", "+00:00"))
    assert timedelta(seconds=55) <= ends - datetime.fromisoformat(grant["createdAt"].replace("Z", "+00:00")) <= timedelta(seconds=60)
    listed = {k["id"]: k for k in api.get(f"{workspace.path}/api-keys", key=workspace.key).json()["items"]}
    assert listed[grant["id"]]["expiresAt"] == grant["expiresAt"] and listed[grant["id"]]["parentKeyId"] == parent["id"]
    # A minute passes, as far as the database knows: the grant's end is behind us. It was never
    # presented before, so no gateway has a verdict on it cached.
    settings = load_settings(stack.env())
    with MongoClient(settings.mongodb_uri) as client:
        past = datetime.now(timezone.utc) - timedelta(seconds=1)
        client[settings.db_prefix + "workspaces"].api_keys.update_one({"keyId": grant["id"]}, {"$set": {"expiresAt": past}})
    r = api.get("/api-key", key=grant["key"])
    assert r.status_code == 401 and r.json() == {"error": "this API key has expired", "code": "unauthorized"}
    assert_error(api.get(f"{workspace.path}/settings", key=grant["key"]), 401)


def test_grant_rules_through_the_gateway(api, workspace):
    base = f"{workspace.path}/api-keys"
    for lifetime in (59, 86401, "60"):
        assert "expiresInSeconds" in assert_error(api.post(base, key=workspace.key, json={"name": "g", "expiresInSeconds": lifetime}), 400)
    writer = api.post(base, key=workspace.key, json={"name": "agent", "role": "write"}).json()
    assert "higher" in assert_error(api.post(base, key=writer["key"], json={"name": "up", "role": "manager"}), 403)
    child = api.post(base, key=writer["key"], json={"name": "down", "role": "read", "expiresInSeconds": 600})
    assert child.status_code == 201 and child.json()["parentKeyId"] == writer["id"]
    # A key revokes itself, and the keys derived from it go with it.
    r = api.delete(f"{base}/{writer['id']}", key=writer["key"])
    assert r.status_code == 200 and r.json()["revokedAt"] is not None
    revoked = {k["id"]: k["revokedAt"] for k in api.get(base, key=workspace.key).json()["items"]}
    assert revoked[writer["id"]] is not None and revoked[child.json()["id"]] is not None


# -- generated SSO secrets ------------------------------------------------------------------


def test_a_generated_sso_secret_through_the_gateway(api, workspace):
    r = api.patch(f"{workspace.path}/settings", key=workspace.key, json={"ssoSecret": "generate"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == set(SETTINGS_FIELDS) and body["ssoRequireAud"] is True and len(body["ssoSecret"]) >= 43
    workspace.sso_secret = body["ssoSecret"]
    no_aud = jwt.encode({"id": "u1", "exp": int(time.time()) + 600}, body["ssoSecret"], algorithm="HS256")
    assert "'aud'" in assert_error(api.get(f"{workspace.path}/branding", user=no_aud), 401)
    assert api.get(f"{workspace.path}/branding", user=workspace.user_token("u1", aud=workspace.slug)).status_code == 200
    assert api.get(f"{workspace.path}/settings", key=workspace.key).json()["ssoSecret"] == body["ssoSecret"]
