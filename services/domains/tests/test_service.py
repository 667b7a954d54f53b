"""The domains service's rules, in process against the real local database: no gateway, no
Kafka, no workspaces service (manager callers prove their workspace; the operator, whose
requests would ask the workspaces service, appears only where no question is needed).

Checks that look DNS up use a service built on the same repository with a config pointing at
the tests' DNS server (``zone``): the context's own config reads this process's environment.
"""

import uuid

import pytest

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.events import OUTBOX
from domains.config import load_config
from domains.dns_check import DnsChecker
from domains.service import DomainService

from .helpers import CNAME_TARGET, DNS_TIMEOUT, PLATFORM_DOMAIN, publish_records


@pytest.fixture(scope="module")
def context(service_context):
    return service_context("domains")


def zone_service(context, zone, **env) -> DomainService:
    """A service whose checks ask the tests' DNS server, on the context's repository."""
    config = load_config(
        context.settings,
        {
            "DOMAINS_DNS_NAMESERVERS": "127.0.0.1",
            "DOMAINS_DNS_PORT": str(zone.port),
            "DOMAINS_DNS_TIMEOUT": str(DNS_TIMEOUT),
            "DOMAINS_CNAME_TARGET": CNAME_TARGET,
            "DOMAINS_PLATFORM_DOMAIN": PLATFORM_DOMAIN,
            **env,
        },
    )
    base = context.service
    return DomainService(base.repo, base.workspaces, config, DnsChecker(config))


@pytest.fixture
def checked(context, zone):
    return zone_service(context, zone)


@pytest.fixture
def slug():
    return f"unit-{uuid.uuid4().hex[:10]}"


def manager(slug):
    return auth.Caller(kind=auth.MANAGER, workspace=slug, key_id="k1")


ANONYMOUS = auth.Caller(kind=auth.ANONYMOUS, user_id="anon:someone")
OPERATOR = auth.Caller(kind=auth.ADMIN)


def events(context, slug):
    """The events written to the outbox for ``slug``, in write order."""
    return [d["event"] for d in context.store.db[OUTBOX].find({"key": slug}, sort=[("at", 1)])]


def test_only_managers_of_the_workspace_get_past_the_check_and_before_the_body_is_read(context, slug, domain):
    service = context.service
    not_a_body = {"not": "even valid"}
    strangers = [
        (ANONYMOUS, Unauthorized),
        (auth.Caller(kind=auth.USER, workspace=slug, user_id="sso:end-user"), Forbidden),
        (manager("some-other-workspace"), Forbidden),
    ]
    for caller, refused in strangers:
        with pytest.raises(refused):
            service.set_domain(caller, slug, not_a_body)
        with pytest.raises(refused):
            service.set_domain(caller, slug, {"domain": domain})
        with pytest.raises(refused):
            service.get(caller, slug)
        with pytest.raises(refused):
            service.remove(caller, slug)
        with pytest.raises(refused):
            service.verify_now(caller, slug)
    assert service.get(manager(slug), slug)["status"] == "none", "nothing was stored"
    assert events(context, slug) == []
    with pytest.raises(BadRequest):
        service.set_domain(manager(slug), slug, not_a_body)


def test_a_name_no_workspace_can_have_is_not_found_after_the_caller_check(context):
    service = context.service
    with pytest.raises(Unauthorized):
        service.get(ANONYMOUS, "Not_A_Slug")
    with pytest.raises(Forbidden):
        service.get(manager("acme"), "Not_A_Slug")
    with pytest.raises(NotFound):
        service.set_domain(OPERATOR, "Not_A_Slug", {"domain": "feedback.example.com"})


def test_the_platforms_own_domain_and_invalid_names_are_refused(context, slug):
    service, config = context.service, context.config
    refused = [
        config.platform_domain,
        "acme." + config.platform_domain,
        config.cname_target,
        "edge." + config.cname_target,
        "192.0.2.1",
        "https://feedback.example.com/",
        "localhost",
        "*.example.com",
    ]
    for name in refused:
        with pytest.raises(BadRequest) as refusal:
            service.set_domain(manager(slug), slug, {"domain": name})
        assert "field 'domain'" in str(refusal.value), name
    for body in ({}, {"domain": 42}, {"domain": "feedback.example.com", "extra": 1}):
        with pytest.raises(BadRequest):
            service.set_domain(manager(slug), slug, body)
    assert service.get(manager(slug), slug)["status"] == "none"
    assert events(context, slug) == []


def test_put_and_delete_move_the_status_and_write_one_event_per_change(context, slug, domain):
    service, target = context.service, context.config.cname_target
    first = service.set_domain(manager(slug), slug, {"domain": domain.upper() + "."})
    assert first["domain"] == domain and first["status"] == "pending" and first["cnameTarget"] == target
    assert [r["type"] for r in first["records"]] == ["txt", "cname"]
    assert service.get(manager(slug), slug) == first

    assert service.set_domain(manager(slug), slug, {"domain": domain}) == first, "the same domain changes nothing"
    changed = service.set_domain(manager(slug), slug, {"domain": "www." + domain})
    assert changed["status"] == "pending" and changed["records"][0]["value"] != first["records"][0]["value"]

    none = {"domain": None, "cnameTarget": target, "status": "none", "records": [], "errors": [], "verifiedAt": None}
    assert service.remove(manager(slug), slug) == none
    assert service.get(manager(slug), slug) == none
    assert service.remove(manager(slug), slug) == none, "removing nothing is not an error"

    written = events(context, slug)
    assert [e["type"] for e in written] == ["domain.pending", "domain.pending", "domain.removed"]
    assert [e["data"] for e in written[:2]] == [first, changed]
    assert written[2]["data"] == {**none, "domain": "www." + domain}
    assert all(e["workspace"] == slug for e in written)


def test_a_domain_belongs_to_one_workspace_until_it_is_released(context, slug, domain):
    service, other = context.service, f"{slug}-other"
    service.set_domain(manager(slug), slug, {"domain": domain})
    with pytest.raises(Conflict) as conflict:
        service.set_domain(manager(other), other, {"domain": domain})
    assert domain in str(conflict.value) and slug not in str(conflict.value)
    assert events(context, other) == [] and service.get(manager(other), other)["status"] == "none"

    service.set_domain(manager(slug), slug, {"domain": "www." + domain})  # releases the first
    assert service.set_domain(manager(other), other, {"domain": domain})["status"] == "pending"
    service.remove(manager(other), other)
    assert service.set_domain(manager(slug), slug, {"domain": domain})["domain"] == domain


def test_check_now_reports_problems_and_verifies_once_the_records_are_right(context, checked, zone, slug, domain):
    with pytest.raises(Conflict):
        checked.verify_now(manager(slug), slug)
    config = checked.set_domain(manager(slug), slug, {"domain": domain})
    assert config["cnameTarget"] == CNAME_TARGET

    missing = checked.verify_now(manager(slug), slug)
    assert missing["status"] == "pending" and missing["verifiedAt"] is None
    assert missing["errors"][0] == f"TXT record _feedback-verify.{domain} not found"

    publish_records(zone, config)
    verified = checked.verify_now(manager(slug), slug)
    assert verified["status"] == "verified" and verified["errors"] == [] and verified["verifiedAt"] is not None
    assert [e["type"] for e in events(context, slug)] == ["domain.pending", "domain.verified"], "no event without a change"
    assert events(context, slug)[-1]["data"] == verified


def test_resolve_answers_verified_domains_only(context, checked, zone, slug, domain):
    with pytest.raises(BadRequest):
        checked.resolve_host(None)
    config = checked.set_domain(manager(slug), slug, {"domain": domain})
    with pytest.raises(NotFound) as pending:
        checked.resolve_host(domain)
    assert "not a verified custom domain" in str(pending.value)

    publish_records(zone, config)
    assert checked.verify_now(manager(slug), slug)["status"] == "verified"
    assert checked.resolve_host(domain) == {"slug": slug}
    assert checked.resolve_host(domain.upper() + ".") == {"slug": slug}
    for host in ("unknown." + domain, "not a host", "192.0.2.1"):
        with pytest.raises(NotFound):
            checked.resolve_host(host)

    checked.remove(manager(slug), slug)
    with pytest.raises(NotFound):
        checked.resolve_host(domain)


def test_the_worker_claims_a_due_domain_once_and_applies_its_check(context, checked, zone, slug, domain):
    later = f"{slug}-later"
    checked.set_domain(manager(later), later, {"domain": "later." + domain})
    assert [d for d in checked.claim_due(1000) if d["_id"] == later] == [], "first checked after DOMAINS_CHECK_INITIAL"

    at_once = zone_service(context, zone, DOMAINS_CHECK_INITIAL="0")
    config = at_once.set_domain(manager(slug), slug, {"domain": domain})
    claimed = [d for d in at_once.claim_due(1000) if d["_id"] == slug]
    assert len(claimed) == 1
    assert [d for d in at_once.claim_due(1000) if d["_id"] == slug] == [], "claimed: leased to one worker"

    publish_records(zone, config)
    after = at_once.recheck(claimed[0])
    assert after["status"] == "verified"
    assert [e["type"] for e in events(context, slug)] == ["domain.pending", "domain.verified"]

    # A check made for a domain that changed meanwhile is dropped.
    at_once.set_domain(manager(slug), slug, {"domain": "www." + domain})
    stale = at_once.recheck(claimed[0])
    assert stale["domain"] == "www." + domain and stale["status"] == "pending"
    assert [e["type"] for e in events(context, slug)] == ["domain.pending", "domain.verified", "domain.pending"]


class MissesOneDocument:
    """A repository whose first read in a transaction misses the workspace's document, as when
    another first PUT of the workspace commits between this one's read and its write."""

    def __init__(self, repo):
        self.repo, self.missed = repo, False

    def __getattr__(self, name):
        return getattr(self.repo, name)

    def find(self, slug, session=None):
        if session is not None and not self.missed:
            self.missed = True
            return None
        return self.repo.find(slug, session)


def test_the_loser_of_two_first_puts_of_one_workspace_tries_again(context, slug, domain):
    base = context.service
    base.set_domain(manager(slug), slug, {"domain": domain})  # the winner
    racing = DomainService(MissesOneDocument(base.repo), base.workspaces, base.config, base.checker)
    answer = racing.set_domain(manager(slug), slug, {"domain": "www." + domain})
    assert racing.repo.missed, "the race happened"
    assert answer["domain"] == "www." + domain and answer["status"] == "pending"
    assert base.get(manager(slug), slug) == answer
    assert [e["type"] for e in events(context, slug)] == ["domain.pending", "domain.pending"]
