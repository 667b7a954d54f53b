"""A workspace's companies through the gateway: upsert by the workspace's own id, list by spend,
members by user id or email, who may see any of it, and the events that carry it to the posts
service."""

import json
import uuid

import pytest

from common.config import Settings
from common.kafka import make_consumer
from testkit import assert_error, wait_for


def put(ws, company_id: str, **fields):
    r = ws.api.put(f"{ws.path}/companies/{company_id}", key=ws.key, json={"name": company_id.title(), **fields})
    assert r.status_code in (200, 201), r.text
    return r


def test_a_company_is_created_then_updated_by_its_own_id(workspace):
    first = put(workspace, "acme", monthlySpend=1250.5, plan="enterprise", attributes={"region": "EU", "seats": 40})
    assert first.status_code == 201
    company = first.json()
    assert {k: company[k] for k in ("id", "name", "monthlySpend", "plan", "attributes")} == {
        "id": "acme", "name": "Acme", "monthlySpend": 1250.5, "plan": "enterprise", "attributes": {"region": "EU", "seats": 40},
    }
    again = put(workspace, "acme", monthlySpend=2000)
    assert again.status_code == 200
    assert again.json()["monthlySpend"] == 2000 and again.json()["plan"] is None, "a PUT replaces every field"
    assert again.json()["createdAt"] == company["createdAt"]
    assert workspace.api.get(f"{workspace.path}/companies/acme", key=workspace.key).json() == again.json()


def test_the_list_shows_the_biggest_spenders_first(workspace):
    for company_id, spend in (("small", 10), ("big", 9000), ("mid", 500)):
        put(workspace, company_id, monthlySpend=spend)
    r = workspace.api.get(f"{workspace.path}/companies", key=workspace.key, params={"limit": 2})
    assert [c["id"] for c in r.json()["items"]] == ["big", "mid"]
    r = workspace.api.get(f"{workspace.path}/companies", key=workspace.key, params={"limit": 2, "offset": 2})
    assert [c["id"] for c in r.json()["items"]] == ["small"]


@pytest.mark.parametrize("body, says", [
    ({"name": "Acme", "monthlySpend": -1}, "monthlySpend"),
    ({"name": "Acme", "monthlySpend": 10.005}, "monthlySpend"),
    ({"name": "Acme", "monthlySpend": "100"}, "monthlySpend"),
    ({"name": ""}, "name"),
    ({"monthlySpend": 5}, "name"),
    ({"name": "Acme", "attributes": {"nested": {"a": 1}}}, "attributes"),
    ({"name": "Acme", "owner": "x"}, "owner"),
])
def test_a_bad_company_is_refused_and_nothing_is_stored(workspace, body, says):
    r = workspace.api.put(f"{workspace.path}/companies/acme", key=workspace.key, json=body)
    assert says in assert_error(r, 400)
    assert_error(workspace.api.get(f"{workspace.path}/companies/acme", key=workspace.key), 404)


def test_a_company_id_must_look_like_one(workspace):
    r = workspace.api.put(f"{workspace.path}/companies/-acme", key=workspace.key, json={"name": "Acme"})
    assert "company id" in assert_error(r, 400)


def test_members_by_user_id_and_by_email(workspace):
    put(workspace, "acme")
    put(workspace, "globex")
    path = f"{workspace.path}/companies/acme/members"
    r = workspace.api.post(path, key=workspace.key, json={"userId": "sso:u-1"})
    assert r.status_code == 200, r.text
    assert r.json() == {"userId": "sso:u-1", "companies": ["acme"]}
    email = f"buyer-{uuid.uuid4().hex[:8]}@example.com"
    by_mail = workspace.api.post(path, key=workspace.key, json={"email": email.upper()})
    assert by_mail.status_code == 200, by_mail.text
    person = by_mail.json()["userId"]
    assert person.startswith("person:")
    again = workspace.api.post(path, key=workspace.key, json={"email": email})
    assert again.json()["userId"] == person, "one person per address"
    both = workspace.api.post(f"{workspace.path}/companies/globex/members", key=workspace.key, json={"userId": "sso:u-1"})
    assert both.json() == {"userId": "sso:u-1", "companies": ["acme", "globex"]}
    listed = workspace.api.get(path, key=workspace.key).json()["items"]
    assert sorted(m["userId"] for m in listed) == sorted(["sso:u-1", person])

    assert workspace.api.delete(f"{path}/sso:u-1", key=workspace.key).status_code == 204
    assert_error(workspace.api.delete(f"{path}/sso:u-1", key=workspace.key), 404)
    assert [m["userId"] for m in workspace.api.get(path, key=workspace.key).json()["items"]] == [person]


def test_a_member_of_an_unknown_company_or_a_bad_name_is_refused(workspace):
    assert_error(workspace.api.post(f"{workspace.path}/companies/nope/members", key=workspace.key, json={"userId": "sso:x"}), 404)
    put(workspace, "acme")
    path = f"{workspace.path}/companies/acme/members"
    assert_error(workspace.api.post(path, key=workspace.key, json={"userId": "anon:abc"}), 400)
    assert_error(workspace.api.post(path, key=workspace.key, json={"email": "not-an-address"}), 400)
    assert_error(workspace.api.post(path, key=workspace.key, json={"email": "a@b.co", "userId": "sso:x"}), 400)
    assert_error(workspace.api.post(path, key=workspace.key, json={}), 400)


def test_deleting_a_company_ends_its_memberships(workspace):
    put(workspace, "acme")
    put(workspace, "globex")
    for company in ("acme", "globex"):
        workspace.api.post(f"{workspace.path}/companies/{company}/members", key=workspace.key, json={"userId": "sso:u-1"})
    assert workspace.api.delete(f"{workspace.path}/companies/acme", key=workspace.key).status_code == 204
    assert_error(workspace.api.get(f"{workspace.path}/companies/acme", key=workspace.key), 404)
    assert_error(workspace.api.delete(f"{workspace.path}/companies/acme", key=workspace.key), 404)
    put(workspace, "acme")  # the same id again: a new company, without the old members
    assert workspace.api.get(f"{workspace.path}/companies/acme/members", key=workspace.key).json()["items"] == []
    listed = workspace.api.get(f"{workspace.path}/companies/globex/members", key=workspace.key).json()["items"]
    assert listed == [{"userId": "sso:u-1", "companies": ["globex"]}]


def test_companies_are_the_teams_only(api, admin_token, workspace, other_workspace):
    put(workspace, "acme", monthlySpend=100)
    path = f"{workspace.path}/companies"
    read_key = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": "reader", "role": "read"}).json()["key"]
    write_key = api.post(f"{workspace.path}/api-keys", key=workspace.key, json={"name": "agent", "role": "write"}).json()["key"]
    user = workspace.user_token("end-user")
    for method, suffix, body in (("GET", "", None), ("GET", "/acme", None), ("PUT", "/acme", {"name": "X"}),
                                 ("DELETE", "/acme", None), ("GET", "/acme/members", None),
                                 ("POST", "/acme/members", {"userId": "sso:x"})):
        assert_error(api.call(method, path + suffix, json=body), 401)
        for who in ({"key": read_key}, {"key": write_key}, {"user": user}, {"key": other_workspace.key}):
            r = api.call(method, path + suffix, json=body, **who)
            assert r.status_code in (403, 405), (method, suffix, who, r.text)
    assert api.get(f"{path}/acme", key=admin_token).json()["monthlySpend"] == 100, "the operator acts as a manager"
    assert workspace.api.get(f"{path}/acme", key=workspace.key).json()["name"] == "Acme", "nothing changed"


def test_changes_are_published_with_whole_memberships(stack, workspace):
    put(workspace, "acme", monthlySpend=99.99)
    put(workspace, "acme", monthlySpend=99.99)  # unchanged: no second event
    workspace.api.post(f"{workspace.path}/companies/acme/members", key=workspace.key, json={"userId": "sso:u-1"})
    workspace.api.delete(f"{workspace.path}/companies/acme", key=workspace.key)
    consumer = make_consumer(Settings(kafka_bootstrap_servers=stack.kafka_bootstrap), f"test-{uuid.uuid4().hex}", ["feedback.companies"])
    seen: list[dict] = []
    try:
        def three():
            for records in consumer.poll(timeout_ms=500).values():
                seen.extend(e for e in (json.loads(r.value) for r in records) if e["workspace"] == workspace.slug)
            return len(seen) >= 3

        wait_for(three, timeout=30, what="the companies events")
    finally:
        consumer.close()
    assert [e["type"] for e in seen] == ["company.updated", "membership.changed", "company.deleted"]
    assert seen[0]["data"]["company"]["monthlySpend"] == 99.99
    assert seen[1]["data"]["userId"] == "sso:u-1" and seen[1]["data"]["companies"] == ["acme"]
    assert seen[2]["data"]["company"] == {"id": "acme", "name": "Acme"}


# -- from an SSO token -------------------------------------------------------------------------


def members_of(ws, company_id: str) -> list[str]:
    r = ws.api.get(f"{ws.path}/companies/{company_id}/members", key=ws.key)
    return [m["userId"] for m in r.json()["items"]] if r.status_code == 200 else []


def test_an_sso_tokens_companies_claim_makes_the_companies_and_the_membership(workspace):
    claim = [{"id": "acme", "name": "Acme Inc", "monthlySpend": 1200, "plan": "pro", "created": "2020-01-01"},
             {"id": "globex", "name": "Globex"}]
    token = workspace.user_token("buyer", companies=claim)
    assert workspace.api.get(f"{workspace.path}/posts", user=token).status_code == 200  # any request identifies the user
    wait_for(lambda: members_of(workspace, "acme") == ["sso:buyer"] and members_of(workspace, "globex") == ["sso:buyer"],
             timeout=30, what="the claimed memberships")
    acme = workspace.api.get(f"{workspace.path}/companies/acme", key=workspace.key).json()
    assert (acme["name"], acme["monthlySpend"], acme["plan"]) == ("Acme Inc", 1200, "pro")
    globex = workspace.api.get(f"{workspace.path}/companies/globex", key=workspace.key).json()
    assert globex["monthlySpend"] == 0, "a company the token names without spend"
    put(workspace, "globex", monthlySpend=300)  # the team sets what the token does not say

    # A later token says the user left Acme; Globex's spend, which it does not give, stays.
    later = workspace.user_token("buyer", companies=[{"id": "globex", "name": "Globex"}])
    assert workspace.api.get(f"{workspace.path}/posts", user=later).status_code == 200
    wait_for(lambda: members_of(workspace, "acme") == [], timeout=30, what="the user leaving acme")
    assert members_of(workspace, "globex") == ["sso:buyer"]
    assert workspace.api.get(f"{workspace.path}/companies/globex", key=workspace.key).json()["monthlySpend"] == 300


@pytest.mark.parametrize("claim", [
    "acme",
    [{"id": "acme"}],
    [{"id": "-bad", "name": "Bad"}],
    [{"id": "acme", "name": "Acme", "monthlySpend": -5}],
    [{"id": f"c{i}", "name": "C"} for i in range(51)],
])
def test_a_token_with_a_malformed_companies_claim_is_refused(workspace, claim):
    token = workspace.user_token("someone", companies=claim)
    message = assert_error(workspace.api.get(f"{workspace.path}/posts", user=token), 401)
    assert "companies" in message
