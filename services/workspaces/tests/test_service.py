"""The workspaces service's rules, in process against the real local database: no gateway, no
Kafka, no posts service (changelog ``postIds`` are checked by a stand-in directory where a
test needs it)."""

import time
import uuid
from datetime import timedelta

import jwt
import pytest

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.idempotency import ShownOnce
from common.ids import now
from workspaces import api_keys, contract
from workspaces.service import WorkspaceService

ADMIN = auth.Caller(kind=auth.ADMIN)
ANONYMOUS = auth.Caller()
OPERATOR = {"id": "operator", "name": "Operator"}  # the operator as events name them
PERSON_ID = "person:5f0c3a9e2b7d4c1a8e6f0b2d"
SECRET = "a-shared-secret-long-enough-for-hs256-tokens"


@pytest.fixture(scope="module")
def context(service_context):
    return service_context("workspaces")


@pytest.fixture
def slug(context):
    slug = f"unit-{uuid.uuid4().hex[:10]}"
    context.service.create(ADMIN, {"slug": slug, "name": "Unit"})
    return slug


def manager(slug, key_id="k1"):
    return auth.Caller(kind=auth.MANAGER, workspace=slug, key_id=key_id)


def person(slug):
    """A signed-in team member of ``slug`` (an owner), as the gateway forwards a person the
    people service signed in."""
    return auth.Caller(kind=auth.MANAGER, workspace=slug, user_id=PERSON_ID, name="Ada Lovelace", email="ada@example.com",
                       role=auth.OWNER)


def user(slug):
    return auth.Caller(kind=auth.USER, workspace=slug, user_id=f"sso:{uuid.uuid4().hex[:8]}")


def key_caller(context, key: str) -> auth.Caller:
    """The caller the gateway forwards for ``key``."""
    return auth.Caller(**context.service.identify({"workspace": None, "apiKey": key}))


def new_key(context, slug, by=ADMIN, **body) -> tuple[dict, auth.Caller]:
    """A key made by ``by`` (the operator by default): its answer and the caller it makes."""
    created = context.service.create_key(by, slug, {"name": "k", **body})
    return created, key_caller(context, created["key"])


def stored_key(context, key_id: str) -> dict:
    return context.store.db["api_keys"].find_one({"keyId": key_id})


def token(secret: str, **claims) -> str:
    return jwt.encode({"id": "u1", "exp": int(time.time()) + 600, **claims}, secret, algorithm="HS256")


def events(context, slug, type_):
    """The data of every ``type_`` event of ``slug`` in the outbox, oldest first."""
    docs = context.store.db["outbox"].find({"key": slug, "event.type": type_}, sort=[("at", 1)])
    return [d["event"]["data"] for d in docs]


class Directory:
    """The posts service as the changelog check sees it: these ids are posts of every workspace."""

    def __init__(self, *known):
        self.known = set(known)

    def unknown(self, slug, ids):
        return [i for i in ids if i not in self.known]


# -- workspaces ------------------------------------------------------------------------------


def test_only_the_operator_creates_workspaces_and_who_comes_before_what(context, slug):
    for caller, error in ((ANONYMOUS, Unauthorized), (user(slug), Forbidden), (manager(slug), Forbidden)):
        with pytest.raises(error):
            context.service.create(caller, {"slug": f"x-{uuid.uuid4().hex[:8]}", "name": "X"})
        with pytest.raises(error):
            context.service.create(caller, {"not": "even valid"})
    with pytest.raises(BadRequest):
        context.service.create(ADMIN, {"slug": "Bad Slug!", "name": "X"})
    with pytest.raises(Conflict):
        context.service.create(ADMIN, {"slug": slug, "name": "Again"})


def test_a_new_workspace_has_default_statuses_a_working_key_and_an_event(context):
    slug = f"unit-{uuid.uuid4().hex[:10]}"
    created = context.service.create(ADMIN, {"slug": slug, "name": "Acme"})
    assert created["workspace"]["slug"] == slug and created["workspace"]["name"] == "Acme"
    statuses = [s["slug"] for s in context.service.statuses(ANONYMOUS, slug)["items"]]
    assert statuses == [s for s, *_ in contract.DEFAULT_STATUSES]
    who = context.service.identify({"workspace": slug, "apiKey": created["apiKey"]})
    assert who["kind"] == auth.MANAGER and who["workspace"] == slug and who["name"] == "Default manager key"
    keys = context.service.api_keys(manager(slug), slug)["items"]
    assert [k["id"] for k in keys] == [who["key_id"]] and keys[0]["role"] == contract.DEFAULT_KEY_ROLE
    assert created["apiKey"] not in str(keys)
    (snapshot,) = events(context, slug, contract.WORKSPACE_CREATED)
    assert snapshot["version"] == 1 and snapshot["defaultStatus"] == "open"
    first_key = {"id": who["key_id"], "name": "Default manager key", "role": "manager", "expiresAt": None, "actor": OPERATOR}
    assert events(context, slug, contract.API_KEY_CREATED) == [first_key]


def test_only_managers_of_the_workspace_change_it(context, slug):
    other = f"unit-{uuid.uuid4().hex[:10]}"
    context.service.create(ADMIN, {"slug": other, "name": "Other"})
    changes = [
        lambda c: context.service.update(c, slug, {"name": "Renamed"}),
        lambda c: context.service.update_settings(c, slug, {"theme": "dark"}),
        lambda c: context.service.add_board(c, slug, {"slug": "ideas", "name": "Ideas"}),
        lambda c: context.service.add_status(c, slug, {"slug": "new", "name": "New", "color": "#000"}),
        lambda c: context.service.update_status(c, slug, "open", {"name": "Fresh"}),
        lambda c: context.service.create_key(c, slug, {"name": "CI"}),
        lambda c: context.service.revoke_key(c, slug, "nope"),
        lambda c: context.service.create_changelog(c, slug, {"title": "T", "slug": "t", "content": "c"}),
        lambda c: context.service.update_changelog(c, slug, "0" * 24, {"title": "x"}),
        lambda c: context.service.agent_context(c, slug),
        lambda c: context.service.api_keys(c, slug),
        lambda c: context.service.settings(c, slug),
    ]
    for change in changes:
        with pytest.raises(Unauthorized):
            change(ANONYMOUS)
        for caller in (user(slug), manager(other)):
            with pytest.raises(Forbidden):
                change(caller)
    assert context.service.get(ANONYMOUS, slug)["name"] == "Unit"
    for reported in (contract.WORKSPACE_UPDATED, contract.WORKSPACE_SETTINGS_CHANGED, contract.API_KEY_REVOKED):
        assert events(context, slug, reported) == []
    assert len(events(context, slug, contract.API_KEY_CREATED)) == 1  # the workspace's first key


def test_a_non_manager_learns_nothing_from_validation(context, slug):
    with pytest.raises(Forbidden):
        context.service.add_board(user(slug), slug, {"slug": "UPPER"})
    with pytest.raises(Forbidden):
        context.service.update_settings(user(slug), slug, {"logo": "https://example.com/x.png"})
    with pytest.raises(Unauthorized):
        context.service.create_changelog(ANONYMOUS, slug, [1, 2])


def test_the_operator_manages_any_workspace_and_finds_unknown_ones_missing(context, slug):
    assert context.service.update(ADMIN, slug, {"name": "By operator"})["name"] == "By operator"
    for call in (
        lambda: context.service.settings(ADMIN, "no-such-ws"),
        lambda: context.service.update_settings(ADMIN, "no-such-ws", {"theme": "dark"}),
        lambda: context.service.agent_context(ADMIN, "no-such-ws"),
        lambda: context.service.api_keys(ADMIN, "no-such-ws"),
        lambda: context.service.branding(ANONYMOUS, "no-such-ws"),
        lambda: context.service.snapshot("no-such-ws"),
    ):
        with pytest.raises(NotFound):
            call()


def test_every_change_bumps_the_version_and_publishes_the_snapshot(context, slug):
    context.service.update(manager(slug), slug, {"name": "Renamed"})
    context.service.update_settings(manager(slug), slug, {"anonVote": True})
    context.service.add_board(manager(slug), slug, {"slug": "ideas", "name": "Ideas"})
    published = events(context, slug, contract.WORKSPACE_UPDATED)
    assert [s["version"] for s in published] == [2, 3, 4]
    assert published[-1] == context.service.snapshot(slug)
    assert published[-1]["name"] == "Renamed" and published[-1]["anonVote"] is True
    # A change that changes nothing is no change: no version, no event.
    context.service.update(manager(slug), slug, {})
    context.service.update_settings(manager(slug), slug, {})
    assert context.service.snapshot(slug)["version"] == 4


def test_author_votes_is_on_by_default_and_travels_in_the_snapshot(context, slug):
    """A new post's author counts as its first voter unless the team turns ``authorVotes``
    off; the posts service learns it from the snapshot (issue 36)."""
    assert context.service.settings(manager(slug), slug)["authorVotes"] is True
    assert context.service.snapshot(slug)["authorVotes"] is True
    assert events(context, slug, contract.WORKSPACE_CREATED)[0]["authorVotes"] is True
    assert context.service.update_settings(manager(slug), slug, {"authorVotes": False})["authorVotes"] is False
    assert context.service.settings(manager(slug), slug)["authorVotes"] is False
    assert events(context, slug, contract.WORKSPACE_UPDATED)[-1] == context.service.snapshot(slug)
    assert context.service.snapshot(slug)["authorVotes"] is False
    with pytest.raises(BadRequest, match="authorVotes"):
        context.service.update_settings(manager(slug), slug, {"authorVotes": "no"})


# -- settings, branding, snapshot ------------------------------------------------------------


def test_settings_are_the_managers_and_the_sso_secret_stays_there(context, slug):
    shown = context.service.update_settings(manager(slug), slug, {"ssoSecret": SECRET, "primaryColor": "#123456"})
    assert shown["ssoSecret"] == SECRET and shown["primaryColor"] == "#123456"
    assert context.service.settings(manager(slug), slug) == shown
    for caller, error in ((ANONYMOUS, Unauthorized), (user(slug), Forbidden), (manager("elsewhere"), Forbidden)):
        with pytest.raises(error):
            context.service.settings(caller, slug)
    context.service.add_board(manager(slug), slug, {"slug": "ideas", "name": "Ideas"})
    for public in (
        context.service.branding(ANONYMOUS, slug),
        context.service.snapshot(slug),
        context.service.agent_context(manager(slug), slug),
        *events(context, slug, contract.WORKSPACE_UPDATED),
    ):
        assert SECRET not in str(public)
    assert context.service.branding(ANONYMOUS, slug)["primaryColor"] == "#123456"


def test_settings_refuse_the_logo_and_say_where_it_is_set(context, slug):
    with pytest.raises(BadRequest) as refused:
        context.service.update_settings(manager(slug), slug, {"logo": "https://example.com/x.png"})
    assert refused.value.message == "field 'logo' is read-only: set it with PATCH /v1/workspaces/{slug}"
    context.service.update(manager(slug), slug, {"logo": "https://example.com/x.png"})
    assert context.service.settings(manager(slug), slug)["logo"] == "https://example.com/x.png"
    assert context.service.branding(ANONYMOUS, slug)["workspace"]["logo"] == "https://example.com/x.png"


def test_branding_shows_the_verified_custom_domain_only(context, slug):
    context.service.set_custom_domain(slug, "feedback.example.com")
    assert context.service.branding(ANONYMOUS, slug)["customDomain"] == "feedback.example.com"
    context.service.set_custom_domain(slug, None)
    assert context.service.branding(ANONYMOUS, slug)["customDomain"] is None
    context.service.set_custom_domain("no-such-ws", "x.example.com")  # ignored, no error


# -- boards and statuses ---------------------------------------------------------------------


def test_board_slugs_are_unique_in_a_workspace(context, slug):
    board = context.service.add_board(manager(slug), slug, {"slug": "ideas", "name": "Ideas"})
    assert set(board) == {"id", "slug", "name", "description", "position", "archived", "createdAt"}
    with pytest.raises(Conflict):
        context.service.add_board(manager(slug), slug, {"slug": "ideas", "name": "Again"})
    assert context.service.boards(ANONYMOUS, slug)["items"] == [board]


def test_statuses_are_added_at_their_order_moved_and_unique(context, slug):
    added = context.service.add_status(manager(slug), slug, {"slug": "shipped", "name": "Shipped", "color": "#0f0", "order": 1})
    assert added == {"slug": "shipped", "name": "Shipped", "color": "#0f0", "order": 1, "roadmap": True, "closed": False}
    with pytest.raises(Conflict):
        context.service.add_status(manager(slug), slug, {"slug": "open", "name": "Open", "color": "#000"})
    moved = context.service.update_status(manager(slug), slug, "shipped", {"order": 6, "roadmap": False, "name": "Released"})
    assert moved == {"slug": "shipped", "name": "Released", "color": "#0f0", "order": 6, "roadmap": False, "closed": False}
    slugs = [s["slug"] for s in context.service.statuses(ANONYMOUS, slug)["items"]]
    assert slugs == ["open", "under-review", "planned", "in-progress", "complete", "closed", "shipped"]
    with pytest.raises(NotFound):
        context.service.update_status(manager(slug), slug, "nope", {"name": "x"})


def test_a_status_edit_never_overwrites_a_change_made_since_it_read(context, slug, monkeypatch):
    repo = context.service.repo
    read = repo.find_workspace

    def read_then_someone_else_changes(s):
        doc = read(s)
        monkeypatch.setattr(repo, "find_workspace", read)
        context.service.add_status(manager(slug), slug, {"slug": "meanwhile", "name": "Meanwhile", "color": "#000"})
        return doc

    monkeypatch.setattr(repo, "find_workspace", read_then_someone_else_changes)
    with pytest.raises(Conflict):
        context.service.update_status(manager(slug), slug, "open", {"name": "Fresh"})
    statuses = {s["slug"]: s["name"] for s in context.service.statuses(ANONYMOUS, slug)["items"]}
    assert statuses["meanwhile"] == "Meanwhile" and statuses["open"] == "Open"


def test_new_posts_get_open_while_it_exists(context, slug):
    context.service.add_status(manager(slug), slug, {"slug": "triage", "name": "Triage", "color": "#000", "order": 0})
    assert context.service.snapshot(slug)["defaultStatus"] == "open"


# -- API keys and identity -------------------------------------------------------------------


def test_a_revoked_key_identifies_nobody_and_revoking_twice_keeps_the_first_time(context, slug):
    created = context.service.create_key(ADMIN, slug, {"name": "CI"})
    assert created["key"].startswith("fbk_") and created["prefix"] == created["key"][:12]
    assert context.service.identify({"workspace": slug, "apiKey": created["key"]})["key_id"] == created["id"]
    revoked = context.service.revoke_key(manager(slug), slug, created["id"])
    assert revoked["revokedAt"] is not None
    assert context.service.revoke_key(manager(slug), slug, created["id"])["revokedAt"] == revoked["revokedAt"]
    with pytest.raises(Unauthorized, match="revoked"):
        context.service.identify({"workspace": slug, "apiKey": created["key"]})
    with pytest.raises(NotFound):
        context.service.revoke_key(manager(slug), slug, "nope")


def test_a_key_cannot_be_revoked_through_another_workspace(context, slug):
    other = f"unit-{uuid.uuid4().hex[:10]}"
    context.service.create(ADMIN, {"slug": other, "name": "Other"})
    created = context.service.create_key(ADMIN, slug, {"name": "CI"})
    with pytest.raises(NotFound):
        context.service.revoke_key(manager(other), other, created["id"])
    assert context.service.identify({"workspace": slug, "apiKey": created["key"]})["kind"] == auth.MANAGER


def test_forged_keys_are_refused(context, slug):
    key = context.service.create_key(ADMIN, slug, {"name": "CI"})["key"]
    for forged in (key[:-1] + ("A" if key[-1] != "A" else "B"), "fbk_0000000000000000_nope", "not-a-key"):
        with pytest.raises(Unauthorized, match="invalid API key"):
            context.service.identify({"workspace": slug, "apiKey": forged})


def test_user_tokens_need_the_workspaces_sso_secret(context, slug):
    exp = int(time.time()) + 600
    token = jwt.encode({"id": "u1", "name": "Ann", "email": "ann@example.com", "exp": exp, "aud": slug}, SECRET, algorithm="HS256")
    with pytest.raises(Unauthorized, match="no ssoSecret"):
        context.service.identify({"workspace": slug, "userToken": token})
    context.service.update_settings(manager(slug), slug, {"ssoSecret": SECRET})
    who = context.service.identify({"workspace": slug, "userToken": token})
    assert who == {"kind": auth.USER, "workspace": slug, "user_id": "sso:u1", "name": "Ann", "email": "ann@example.com"}
    forged = jwt.encode({"id": "u1", "exp": exp, "aud": slug}, "another-secret-long-enough-for-hs256", algorithm="HS256")
    with pytest.raises(Unauthorized, match="invalid user token"):
        context.service.identify({"workspace": slug, "userToken": forged})
    anonymous = jwt.encode({"name": "nobody", "exp": exp, "aud": slug}, SECRET, algorithm="HS256")
    with pytest.raises(Unauthorized, match="'id' or 'email'"):
        context.service.identify({"workspace": slug, "userToken": anonymous})


# -- who did it -----------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["api key", "operator", "person"])
def test_every_change_names_who_made_it_and_never_a_secret(context, slug, who):
    if who == "api key":
        key, caller = new_key(context, slug, name="Zapier")
        actor = {"id": f"key:{key['id']}", "name": "Zapier"}
    else:
        caller, actor = {"operator": (ADMIN, OPERATOR), "person": (person(slug), {"id": PERSON_ID, "name": "Ada Lovelace"})}[who]
    service = context.service
    service.update(caller, slug, {"name": "Renamed", "logo": "https://example.com/logo.png"})
    service.update_settings(caller, slug, {"ssoSecret": SECRET, "primaryColor": "#123456"})
    service.update_settings(caller, slug, {})  # nothing set: nothing to report
    service.add_board(caller, slug, {"slug": "ideas", "name": "Ideas"})
    service.add_status(caller, slug, {"slug": "new", "name": "New", "color": "#000"})
    service.update_status(caller, slug, "new", {"name": "Fresh"})
    changed = [["logo", "name"], ["primaryColor", "ssoSecret"], ["boards"], ["statuses"], ["statuses"]]
    assert events(context, slug, contract.WORKSPACE_SETTINGS_CHANGED) == [{"fields": f, "actor": actor} for f in changed]

    made = service.create_key(caller, slug, {"name": "CI", "role": "write", "expiresInSeconds": 600})
    service.revoke_key(caller, slug, made["id"])
    service.revoke_key(caller, slug, made["id"])  # revoked already: not reported again
    reported = [e for e in events(context, slug, contract.API_KEY_CREATED) if e["id"] == made["id"]]
    assert reported == [{"id": made["id"], "name": "CI", "role": "write", "expiresAt": made["expiresAt"], "actor": actor}]
    assert events(context, slug, contract.API_KEY_REVOKED) == [{"id": made["id"], "name": "CI", "actor": actor}]

    entry = service.create_changelog(caller, slug, {"title": "Dark mode", "slug": "dark", "content": "c", "publish": True})
    assert events(context, slug, contract.CHANGELOG_PUBLISHED) == [{**entry, "actor": actor}]
    everything = list(context.store.db["outbox"].find({"key": slug}))
    assert SECRET not in str(everything) and made["key"] not in str(everything)


# -- changelogs ------------------------------------------------------------------------------


def test_drafts_are_hidden_from_everyone_but_managers(context, slug):
    draft = context.service.create_changelog(manager(slug), slug, {"title": "Soon", "slug": "soon", "content": "c"})
    assert draft["publishedAt"] is None
    for caller in (ANONYMOUS, user(slug), manager("elsewhere")):
        with pytest.raises(NotFound):
            context.service.changelog(caller, slug, draft["id"])
        assert context.service.changelogs(caller, slug, 20, 0)["items"] == []
    assert context.service.changelog(ADMIN, slug, draft["id"]) == draft
    assert [c["id"] for c in context.service.changelogs(manager(slug), slug, 20, 0)["items"]] == [draft["id"]]
    assert "Soon" not in str(context.service.agent_context(manager(slug), slug))
    assert events(context, slug, contract.CHANGELOG_PUBLISHED) == []

    published = context.service.update_changelog(manager(slug), slug, draft["id"], {"publish": True})
    assert published["publishedAt"] is not None
    assert context.service.changelog(ANONYMOUS, slug, draft["id"]) == published
    assert events(context, slug, contract.CHANGELOG_PUBLISHED) == [{**published, "actor": {"id": "key:k1", "name": "API key"}}]


def test_an_entry_is_published_once_and_never_unpublished(context, slug):
    entry = context.service.create_changelog(manager(slug), slug, {"title": "T", "slug": "t", "content": "c", "publish": True})
    again = context.service.update_changelog(manager(slug), slug, entry["id"], {"publish": True})
    assert again["publishedAt"] == entry["publishedAt"]
    with pytest.raises(Conflict):
        context.service.update_changelog(manager(slug), slug, entry["id"], {"publish": False})
    with pytest.raises(Conflict):
        context.service.create_changelog(manager(slug), slug, {"title": "T", "slug": "t", "content": "c"})
    assert events(context, slug, contract.CHANGELOG_PUBLISHED) == [{**entry, "actor": {"id": "key:k1", "name": "API key"}}]
    with pytest.raises(NotFound):
        context.service.update_changelog(manager(slug), slug, "not-an-id", {"title": "x"})


def test_changelog_post_ids_must_be_posts_of_the_workspace(context, slug):
    known = "a" * 24
    service = WorkspaceService(context.service.repo, Directory(known))
    with pytest.raises(NotFound, match="unknown post"):
        service.create_changelog(manager(slug), slug, {"title": "T", "slug": "t", "content": "c", "postIds": ["b" * 24]})
    entry = service.create_changelog(manager(slug), slug, {"title": "T", "slug": "t", "content": "c", "postIds": [known, known]})
    assert entry["postIds"] == [known]
    with pytest.raises(NotFound, match="unknown post"):
        service.update_changelog(manager(slug), slug, entry["id"], {"postIds": [known, "c" * 24]})


def test_agent_context_lists_the_latest_published_entries(context, slug):
    context.service.update_settings(manager(slug), slug, {"brandVoice": "Plain words."})
    for i in range(contract.AGENT_CONTEXT_CHANGELOGS + 2):
        context.service.create_changelog(manager(slug), slug, {"title": f"v{i}", "slug": f"v{i}", "content": "c", "publish": True})
    shown = context.service.agent_context(manager(slug), slug)
    assert shown["brandVoice"] == "Plain words."
    newest = [f"v{i}" for i in reversed(range(2, contract.AGENT_CONTEXT_CHANGELOGS + 2))]
    assert [c["title"] for c in shown["recentChangelogs"]] == newest


# -- API key grants, derived keys and the cap ------------------------------------------------


def test_a_grant_expires_names_its_parent_and_is_listed(context, slug):
    parent, parent_caller = new_key(context, slug)
    assert parent["parentKeyId"] is None and parent["expiresAt"] is None
    before = now()
    grant, _ = new_key(context, slug, by=parent_caller, expiresInSeconds=600)
    assert grant["parentKeyId"] == parent["id"] and grant["key"].startswith(api_keys.KEY_PREFIX)
    expires = stored_key(context, grant["id"])["expiresAt"]
    assert before + timedelta(seconds=600) <= expires <= now() + timedelta(seconds=600)
    assert grant["expiresAt"].endswith("Z") and len(grant["expiresAt"]) == len("2025-01-01T00:00:00.000Z")
    listed = {k["id"]: k for k in context.service.api_keys(ADMIN, slug)["items"]}
    # as created, but for its last use: making its caller (``new_key``) was one
    assert {k: v for k, v in listed[grant["id"]].items() if k != "lastUsedAt"} == {
        k: v for k, v in grant.items() if k not in ("key", "lastUsedAt")}
    assert grant["lastUsedAt"] is None and listed[grant["id"]]["lastUsedAt"] is not None
    assert listed[parent["id"]]["expiresAt"] is None and listed[parent["id"]]["parentKeyId"] is None
    assert context.service.identify({"workspace": slug, "apiKey": grant["key"]})["key_id"] == grant["id"]


def test_an_expired_key_is_refused_as_expired(context, slug):
    grant, caller = new_key(context, slug, expiresInSeconds=60)
    # Time passes: the grant's end is behind us (the TTL index has not removed it yet).
    context.store.db["api_keys"].update_one({"keyId": grant["id"]}, {"$set": {"expiresAt": now() - timedelta(seconds=1)}})
    for call in (
        lambda: context.service.identify({"workspace": slug, "apiKey": grant["key"]}),
        lambda: context.service.current_key(caller),
        lambda: context.service.create_key(caller, slug, {"name": "from an expired key"}),
    ):
        with pytest.raises(Unauthorized) as refused:
            call()
        assert refused.value.message == "this API key has expired"


def test_expired_keys_are_removed_by_a_ttl_index(context):
    indexes = context.store.db["api_keys"].index_information().values()
    assert any(i["key"] == [("expiresAt", 1)] and i.get("expireAfterSeconds") == 0 for i in indexes)


def test_a_derived_key_never_has_a_higher_role_than_its_parent(context, slug):
    _, reader = new_key(context, slug, role="read")
    _, writer = new_key(context, slug, role="write")
    for parent, too_high in ((reader, "write"), (reader, "manager"), (writer, "manager")):
        with pytest.raises(Forbidden, match="higher"):
            context.service.create_key(parent, slug, {"name": "x", "role": too_high})
    assert new_key(context, slug, by=reader, role="read")[1].role == "read"
    child, child_caller = new_key(context, slug, by=writer, role="read", expiresInSeconds=300)
    assert child["parentKeyId"] == writer.key_id and child_caller.kind == auth.USER
    # A key is not a manager for anything else: listing and others' keys stay the managers'.
    with pytest.raises(Forbidden):
        context.service.api_keys(writer, slug)
    with pytest.raises(Forbidden):
        context.service.create_key(writer, f"{slug}-other", {"name": "elsewhere"})


def test_a_key_derived_from_a_grant_never_outlives_it(context, slug):
    grant, grant_caller = new_key(context, slug, expiresInSeconds=120)
    ends = stored_key(context, grant["id"])["expiresAt"]
    longer, _ = new_key(context, slug, by=grant_caller, expiresInSeconds=3600)
    long_lived, _ = new_key(context, slug, by=grant_caller)
    shorter, _ = new_key(context, slug, by=grant_caller, expiresInSeconds=60)
    assert longer["expiresAt"] == long_lived["expiresAt"] == grant["expiresAt"]
    assert stored_key(context, long_lived["id"])["expiresAt"] == ends
    assert stored_key(context, shorter["id"])["expiresAt"] < ends


def test_a_grant_lasts_60_seconds_to_a_day(context, slug):
    for lifetime in (59, 86401, "600", 600.5, True, None):
        with pytest.raises(BadRequest, match="expiresInSeconds"):
            context.service.create_key(ADMIN, slug, {"name": "g", "expiresInSeconds": lifetime})
    assert new_key(context, slug, expiresInSeconds=86400)[0]["expiresAt"] is not None


def test_revoking_a_key_revokes_the_keys_derived_from_it(context, slug):
    root, root_caller = new_key(context, slug)
    child, child_caller = new_key(context, slug, by=root_caller, expiresInSeconds=600)
    grandchild, _ = new_key(context, slug, by=child_caller, role="read", expiresInSeconds=300)
    sibling, _ = new_key(context, slug, by=root_caller)
    context.service.revoke_key(manager(slug), slug, child["id"])
    for revoked in (child, grandchild):
        with pytest.raises(Unauthorized, match="revoked"):
            context.service.identify({"workspace": slug, "apiKey": revoked["key"]})
    for alive in (root, sibling):
        assert context.service.identify({"workspace": slug, "apiKey": alive["key"]})["key_id"] == alive["id"]
    context.service.revoke_key(manager(slug), slug, root["id"])
    with pytest.raises(Unauthorized, match="revoked"):
        context.service.identify({"workspace": slug, "apiKey": sibling["key"]})
    # Each revocation asked for is reported; the derived keys go with it, unreported.
    assert [e["id"] for e in events(context, slug, contract.API_KEY_REVOKED)] == [child["id"], root["id"]]


def test_a_key_may_revoke_itself_and_only_itself(context, slug):
    other, _ = new_key(context, slug)
    for role in ("read", "write", "manager"):
        mine, caller = new_key(context, slug, role=role, expiresInSeconds=600)
        if role != "manager":
            with pytest.raises(Forbidden):
                context.service.revoke_key(caller, slug, other["id"])
        assert context.service.revoke_key(caller, slug, mine["id"])["revokedAt"] is not None
        with pytest.raises(Unauthorized, match="revoked"):
            context.service.identify({"workspace": slug, "apiKey": mine["key"]})
    assert context.service.identify({"workspace": slug, "apiKey": other["key"]})["key_id"] == other["id"]


def test_a_key_made_while_its_parent_is_revoked_is_revoked_too(context, slug, monkeypatch):
    parent, parent_caller = new_key(context, slug)
    repo = context.service.repo
    add = repo.add_key

    def add_while_the_parent_is_revoked(doc, event):
        add(doc, event)
        repo.revoke_with_derived(slug, parent["id"], now())

    monkeypatch.setattr(repo, "add_key", add_while_the_parent_is_revoked)
    with pytest.raises(Unauthorized, match="revoked"):
        context.service.create_key(parent_caller, slug, {"name": "raced"})
    (raced,) = [k for k in context.service.api_keys(ADMIN, slug)["items"] if k["name"] == "raced"]
    assert raced["revokedAt"] is not None
    # And a revoked key (still trusted by a gateway's cache for a moment) makes nothing.
    monkeypatch.setattr(repo, "add_key", add)
    with pytest.raises(Unauthorized, match="revoked"):
        context.service.create_key(parent_caller, slug, {"name": "too late"})


def insert_keys(context, slug, count: int, expires) -> None:
    docs = [
        context.service.repo.new_key(
            keyId=uuid.uuid4().hex[:16], workspace=slug, name="bulk", role="read", hash=uuid.uuid4().hex,
            prefix="fbk_bulk", createdAt=now(), expiresAt=expires, parentKeyId=None,
        )
        for _ in range(count)
    ]
    context.store.db["api_keys"].insert_many(docs)


def test_a_workspace_has_at_most_100_long_lived_keys(context, slug):
    insert_keys(context, slug, contract.MAX_LONG_LIVED_KEYS - 2, None)  # with the first key: one short
    last, _ = new_key(context, slug)
    with pytest.raises(Conflict, match="100 long-lived"):
        context.service.create_key(ADMIN, slug, {"name": "one too many"})
    assert new_key(context, slug, expiresInSeconds=60)[0]["expiresAt"] is not None  # grants are counted apart
    context.service.revoke_key(ADMIN, slug, last["id"])  # revoked keys do not count
    assert new_key(context, slug)[0]["expiresAt"] is None


def test_a_workspace_has_at_most_1000_live_grants(context, slug):
    insert_keys(context, slug, contract.MAX_LIVE_GRANTS - 1, now() + timedelta(hours=1))
    insert_keys(context, slug, 5, now() - timedelta(seconds=1))  # expired: not counted
    last, _ = new_key(context, slug, expiresInSeconds=600)
    with pytest.raises(Conflict, match="1000 unexpired grants"):
        context.service.create_key(ADMIN, slug, {"name": "one too many", "expiresInSeconds": 600})
    assert new_key(context, slug)[0]["expiresAt"] is None  # long-lived keys are counted apart
    context.service.revoke_key(ADMIN, slug, last["id"])
    assert new_key(context, slug, expiresInSeconds=600)[0]["expiresAt"] is not None


def test_new_keys_are_answers_shown_once(context, slug):
    created = context.service.create_key(ADMIN, slug, {"name": "CI"})
    assert isinstance(created, ShownOnce) and created["id"] in created.notice and "api-keys" in created.notice
    workspace = context.service.create(ADMIN, {"slug": f"unit-{uuid.uuid4().hex[:10]}", "name": "W"})
    assert isinstance(workspace, ShownOnce) and workspace["apiKey"] not in workspace.notice


# -- SSO secrets: strength, audience, sealed at rest ------------------------------------------


def test_a_chosen_sso_secret_has_at_least_32_characters(context, slug):
    with pytest.raises(BadRequest, match="ssoSecret"):
        context.service.update_settings(manager(slug), slug, {"ssoSecret": "x" * 31})
    assert context.service.update_settings(manager(slug), slug, {"ssoSecret": "x" * 32})["ssoSecret"] == "x" * 32


def test_tokens_signed_with_a_secret_set_now_must_name_the_workspace(context, slug):
    shown = context.service.update_settings(manager(slug), slug, {"ssoSecret": SECRET})
    assert shown["ssoRequireAud"] is True
    with pytest.raises(Unauthorized, match="'aud'"):
        context.service.identify({"workspace": slug, "userToken": token(SECRET)})
    with pytest.raises(Unauthorized, match="'aud'"):
        context.service.identify({"workspace": slug, "userToken": token(SECRET, aud="another-workspace")})
    assert context.service.identify({"workspace": slug, "userToken": token(SECRET, aud=slug)})["user_id"] == "sso:u1"
    assert context.service.identify({"workspace": slug, "userToken": token(SECRET, aud=["x", slug])})["user_id"] == "sso:u1"


def test_a_secret_set_before_aud_was_required_keeps_it_optional(context, slug):
    # As stored before this change: in clear, and without the flag.
    context.store.db["workspaces"].update_one({"_id": slug}, {"$set": {"settings.ssoSecret": SECRET}, "$unset": {"settings.ssoRequireAud": ""}})
    assert context.service.identify({"workspace": slug, "userToken": token(SECRET)})["user_id"] == "sso:u1"
    with pytest.raises(Unauthorized, match="'aud'"):
        context.service.identify({"workspace": slug, "userToken": token(SECRET, aud="another-workspace")})
    shown = context.service.settings(manager(slug), slug)
    assert shown["ssoSecret"] == SECRET and shown["ssoRequireAud"] is False


def test_a_generated_sso_secret_is_strong_and_needs_aud(context, slug):
    generate = {"ssoSecret": contract.SSO_SECRET_GENERATE}
    for caller, error in ((ANONYMOUS, Unauthorized), (user(slug), Forbidden), (manager("elsewhere"), Forbidden)):
        with pytest.raises(error):
            context.service.update_settings(caller, slug, generate)
    generated = context.service.update_settings(manager(slug), slug, generate)
    secret = generated["ssoSecret"]
    assert len(secret) >= 43 and secret != contract.SSO_SECRET_GENERATE and generated["ssoRequireAud"] is True
    assert context.service.settings(manager(slug), slug) == generated
    again = context.service.update_settings(manager(slug), slug, {**generate, "theme": "dark"})
    assert again["ssoSecret"] not in (secret, None) and again["theme"] == "dark"
    with pytest.raises(Unauthorized, match="invalid user token"):
        context.service.identify({"workspace": slug, "userToken": token(secret, aud=slug)})  # replaced
    with pytest.raises(Unauthorized, match="'aud'"):
        context.service.identify({"workspace": slug, "userToken": token(again["ssoSecret"])})
    assert context.service.identify({"workspace": slug, "userToken": token(again["ssoSecret"], aud=slug)})["kind"] == auth.USER


def test_the_sso_secret_is_stored_sealed_and_removable(context, slug):
    context.service.update_settings(manager(slug), slug, {"ssoSecret": SECRET})
    stored = context.store.db["workspaces"].find_one({"_id": slug})
    assert SECRET not in str(stored) and stored["settings"]["ssoSecret"].startswith("sealed:")
    assert context.service.settings(manager(slug), slug)["ssoSecret"] == SECRET
    removed = context.service.update_settings(manager(slug), slug, {"ssoSecret": None})
    assert removed["ssoSecret"] is None and removed["ssoRequireAud"] is False
    with pytest.raises(Unauthorized, match="no ssoSecret"):
        context.service.identify({"workspace": slug, "userToken": token(SECRET, aud=slug)})
