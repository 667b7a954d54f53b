"""A workspace's domain configuration through the gateway: set (PUT), remove (DELETE), read
(GET) and "check now" (POST .../verify), with their errors."""

import re

from .helpers import CNAME_TARGET, DNS_TIMEOUT, PLATFORM_DOMAIN, get_domain, publish_records, put_domain, verify

from testkit import assert_error, unique_slug, wait_for

TOKEN = re.compile(r"^feedback-verify-[0-9a-f]{32}$")
FIELDS = {"domain", "cnameTarget", "status", "records", "errors", "verifiedAt"}


def test_no_domain_is_status_none(workspace):
    assert get_domain(workspace) == {
        "domain": None, "cnameTarget": CNAME_TARGET, "status": "none", "records": [], "errors": [], "verifiedAt": None,
    }


def test_put_answers_pending_with_the_records_to_create(workspace, domain):
    config = put_domain(workspace, domain.upper() + ".")
    assert set(config) == FIELDS
    assert config["domain"] == domain, "lower case, without the final dot"
    assert config["cnameTarget"] == CNAME_TARGET
    assert config["status"] == "pending"
    assert config["errors"] == [] and config["verifiedAt"] is None
    txt, cname = config["records"]
    assert txt["type"] == "txt" and txt["name"] == f"_feedback-verify.{domain}" and TOKEN.match(txt["value"])
    assert cname == {"type": "cname", "name": domain, "value": CNAME_TARGET}
    stored = get_domain(workspace)  # the worker may have checked meanwhile (errors, status)
    assert {k: stored[k] for k in ("domain", "cnameTarget", "records")} == {k: config[k] for k in ("domain", "cnameTarget", "records")}


def test_same_domain_again_keeps_the_token_and_a_new_one_restarts(workspace, domain):
    first = put_domain(workspace, domain)
    assert put_domain(workspace, domain)["records"] == first["records"]
    other = put_domain(workspace, "www." + domain)
    assert other["domain"] == "www." + domain and other["status"] == "pending"
    assert other["records"][0]["value"] != first["records"][0]["value"], "a changed domain gets a new token"


def test_internationalized_domain_is_idna_encoded(workspace, domain):
    config = put_domain(workspace, f"Bücher.{domain}")
    assert config["domain"] == f"xn--bcher-kva.{domain}"
    assert config["records"][0]["name"] == f"_feedback-verify.xn--bcher-kva.{domain}"


def test_put_validation_errors_name_the_field(workspace):
    cases = [
        {},
        {"domain": 42},
        {"domain": ""},
        {"domain": "feedback.example.com", "extra": 1},
        {"domain": "192.0.2.1"},
        {"domain": "2001:db8::1"},
        {"domain": "https://feedback.example.com/"},
        {"domain": "feedback.example.com:8080"},
        {"domain": "localhost"},
        {"domain": "a..example.com"},
        {"domain": "*.example.com"},
        {"domain": "-bad.example.com"},
        {"domain": "x" * 64 + ".example.com"},
        {"domain": ("a" * 60 + ".") * 4 + "com"},  # 247 characters: no room for the TXT record name
        {"domain": PLATFORM_DOMAIN},
        {"domain": "acme." + PLATFORM_DOMAIN},
        {"domain": CNAME_TARGET},
    ]
    for payload in cases:
        r = workspace.api.put(f"{workspace.path}/domain", key=workspace.key, json=payload)
        message = assert_error(r, 400)
        assert "domain" in message or "unknown field" in message, (payload, message)
    r = workspace.api.put(f"{workspace.path}/domain", key=workspace.key, data="{not json", headers={"Content-Type": "application/json"})
    assert_error(r, 400)
    assert get_domain(workspace)["status"] == "none", "nothing was stored"


def test_put_errors_401_403_404(api, admin_token, workspace, other_workspace, domain):
    path = f"{workspace.path}/domain"
    assert_error(api.put(path, json={"domain": domain}), 401)
    assert_error(api.put(path, key="fbk_0000000000000000_invalid", json={"domain": domain}), 401)
    assert_error(api.put(path, key=other_workspace.key, json={"domain": domain}), 403)
    assert_error(api.put(path, user=workspace.user_token("end-user"), json={"domain": domain}), 403)
    assert_error(api.put(f"/workspaces/{unique_slug()}/domain", key=admin_token, json={"domain": domain}), 404)


def test_a_squatters_claim_does_not_keep_the_real_owner_out(api, workspace, other_workspace, zone, domain):
    squatter, owner = workspace, other_workspace
    claimed = put_domain(squatter, domain)  # first, before any DNS proof
    r = api.put(f"{owner.path}/domain", key=owner.key, json={"domain": domain.upper()})
    assert r.status_code == 200, r.text
    mine = r.json()
    assert mine["status"] == "pending" and mine["records"][0]["value"] != claimed["records"][0]["value"]

    publish_records(zone, mine)
    assert verify(owner)["status"] == "verified"
    r = api.get("/branding", headers={"Host": domain})
    assert r.status_code == 200 and r.json()["workspace"]["slug"] == owner.slug, "the host is the owner's"

    # Even with its own token published beside the owner's, the squatter never gets the name.
    zone.set(f"_feedback-verify.{domain}", "TXT", f'"{claimed["records"][0]["value"]}"', f'"{mine["records"][0]["value"]}"')
    held = f"{domain} is verified by another workspace"
    refused = verify(squatter)
    assert refused["status"] == "pending" and len(refused["errors"]) == 1 and refused["errors"][0].startswith(held)
    failed = wait_for(lambda: (d := get_domain(squatter))["status"] == "failed" and d, timeout=60, what="the worker to fail the claim")
    assert failed["errors"][0].startswith(held) and failed["verifiedAt"] is None
    assert get_domain(owner)["status"] == "verified"
    assert api.get("/branding", headers={"Host": domain}).json()["workspace"]["slug"] == owner.slug


def test_operator_may_manage_any_workspace(api, admin_token, workspace, domain):
    r = api.put(f"{workspace.path}/domain", key=admin_token, json={"domain": domain})
    assert r.status_code == 200 and r.json()["status"] == "pending", r.text


def test_a_released_domain_can_be_claimed_by_another_workspace(api, workspace, other_workspace, domain):
    put_domain(workspace, domain)
    put_domain(workspace, "www." + domain)  # changing the domain releases the old one
    assert put_domain(other_workspace, domain)["status"] == "pending"
    r = api.delete(f"{other_workspace.path}/domain", key=other_workspace.key)
    assert r.status_code == 200
    assert put_domain(workspace, domain)["domain"] == domain


def test_delete_answers_status_none_and_errors(api, admin_token, workspace, other_workspace, domain):
    path = f"{workspace.path}/domain"
    put_domain(workspace, domain)
    assert_error(api.delete(path), 401)
    assert_error(api.delete(path, key=other_workspace.key), 403)
    assert_error(api.delete(f"/workspaces/{unique_slug()}/domain", key=admin_token), 404)
    none = {"domain": None, "cnameTarget": CNAME_TARGET, "status": "none", "records": [], "errors": [], "verifiedAt": None}
    r = api.delete(path, key=workspace.key)
    assert r.status_code == 200 and r.json() == none
    assert get_domain(workspace) == none
    r = api.delete(path, key=workspace.key)
    assert r.status_code == 200 and r.json() == none, "removing nothing is not an error"


def test_get_and_verify_are_for_managers(api, workspace, other_workspace):
    for method in ("get", "post"):
        path = f"{workspace.path}/domain" + ("/verify" if method == "post" else "")
        assert_error(getattr(api, method)(path), 401)
        assert_error(getattr(api, method)(path, key=other_workspace.key), 403)


def test_verify_without_a_domain_is_a_conflict(workspace):
    assert_error(workspace.api.post(f"{workspace.path}/domain/verify", key=workspace.key), 409)


def test_verify_reports_each_problem_until_the_records_are_right(workspace, zone, domain):
    config = put_domain(workspace, domain)
    txt_name = f"_feedback-verify.{domain}"

    checked = verify(workspace)  # nothing in DNS yet: NXDOMAIN
    assert checked["status"] == "pending" and checked["verifiedAt"] is None
    assert checked["errors"] == [
        f"TXT record {txt_name} not found",
        f"{domain} does not exist in DNS (NXDOMAIN): create a CNAME record {domain} pointing to {CNAME_TARGET}",
    ]

    zone.set(txt_name, "TXT", '"feedback-verify-not-the-token"')
    zone.set(domain, "CNAME", "somewhere.example.net.")
    assert verify(workspace)["errors"] == [
        f'TXT record {txt_name} holds "feedback-verify-not-the-token", expected "{config["records"][0]["value"]}"',
        f"CNAME points to somewhere.example.net, expected {CNAME_TARGET}",
    ]

    zone.clear(txt_name)
    assert verify(workspace)["errors"] == [
        f"TXT record {txt_name} not found",
        f"CNAME points to somewhere.example.net, expected {CNAME_TARGET}",
    ]

    publish_records(zone, config)
    done = verify(workspace)
    assert done["status"] == "verified" and done["errors"] == []
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", done["verifiedAt"])
    assert get_domain(workspace) == done


def test_dns_timeouts_and_servfail_are_errors_not_failures(workspace, zone, domain):
    put_domain(workspace, domain)
    zone.silent(f"_feedback-verify.{domain}")
    zone.servfail(domain)
    checked = verify(workspace)
    assert checked["status"] == "pending"
    assert checked["errors"] == [
        f"DNS lookup of TXT _feedback-verify.{domain} timed out after {DNS_TIMEOUT:g}s",
        f"DNS lookup of CNAME {domain} failed: the nameserver answered SERVFAIL",
    ]
    workspace.api.delete(f"{workspace.path}/domain", key=workspace.key)  # stop the worker asking


def test_concurrent_claims_and_checks_of_one_domain_leave_one_owner(stack, api, admin_token, zone, domain):
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from testkit import Api, create_workspace

    contenders = [create_workspace(api, admin_token) for _ in range(4)]
    start = Barrier(len(contenders))

    def at_once(method, suffix, **kwargs):
        def call(ws):
            own = Api(stack.url)  # a session per thread
            start.wait()
            return getattr(own, method)(f"{ws.path}/domain{suffix}", key=ws.key, **kwargs)

        with ThreadPoolExecutor(len(contenders)) as pool:
            return list(pool.map(call, contenders))

    claims = at_once("put", "", json={"domain": domain})
    assert [r.status_code for r in claims] == [200] * 4, [r.text for r in claims]
    tokens = [r.json()["records"][0]["value"] for r in claims]
    assert len(set(tokens)) == 4
    zone.set(f"_feedback-verify.{domain}", "TXT", *(f'"{t}"' for t in tokens))  # every claim's record passes in DNS
    zone.set(domain, "CNAME", f"{CNAME_TARGET}.")

    checks = at_once("post", "/verify")
    assert [r.status_code for r in checks] == [200] * 4, [r.text for r in checks]
    assert sorted(r.json()["status"] for r in checks) == ["pending"] * 3 + ["verified"], [r.json() for r in checks]
    # The worker checks them too meanwhile: still one owner, whoever's check ran first.
    statuses = [get_domain(ws)["status"] for ws in contenders]
    assert statuses.count("verified") == 1, statuses
    [owner] = [ws for ws, status in zip(contenders, statuses) if status == "verified"]
    assert api.get("/branding", headers={"Host": domain}).json()["workspace"]["slug"] == owner.slug
