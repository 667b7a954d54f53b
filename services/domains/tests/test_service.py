"""The domains service's rules, in process against the real local database: no gateway, no
Kafka, no workspaces service (manager callers prove their workspace; the operator, whose
requests would ask the workspaces service, appears only where no question is needed).

Checks that look DNS up use a service built on the same repository with a config pointing at
the tests' DNS server (``zone``): the context's own config reads this process's environment.
"""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.events import OUTBOX
from domains.config import load_config
from domains.dns_check import DnsChecker
from domains.models import CLAIMED_DOMAIN_INDEX, VERIFIED_DOMAIN_INDEX, DomainConfig
from domains.repository import DomainRepository
from domains.service import HELD, DomainService

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


def publish_tokens(zone, domain, *configs):
    """The TXT record holding every configuration's token (two claimants' records side by side),
    and the CNAME to the platform."""
    zone.set(f"_feedback-verify.{domain}", "TXT", *(f'"{c["records"][0]["value"]}"' for c in configs))
    zone.set(domain, "CNAME", f"{CNAME_TARGET}.")


def test_claims_of_one_domain_coexist_and_the_first_to_verify_holds_it(context, checked, zone, slug, domain):
    squatter, owner = slug, f"{slug}-owner"
    no_patience = zone_service(context, zone, DOMAINS_PENDING_TIMEOUT="0")  # its deadline is now
    claimed = no_patience.set_domain(manager(squatter), squatter, {"domain": domain})
    mine = checked.set_domain(manager(owner), owner, {"domain": domain})  # the real owner is not refused
    assert mine["status"] == claimed["status"] == "pending" and mine["domain"] == domain
    assert mine["records"][0]["value"] != claimed["records"][0]["value"], "each claim has its own token"

    publish_records(zone, mine)  # only the owner can put its token in DNS
    assert checked.verify_now(manager(squatter), squatter)["status"] == "pending"
    assert checked.verify_now(manager(owner), owner)["status"] == "verified"
    assert checked.resolve_host(domain) == {"slug": owner}

    publish_tokens(zone, domain, claimed, mine)  # even with the squatter's token there too
    held = HELD.format(domain=domain)
    for _ in range(2):
        refused = checked.verify_now(manager(squatter), squatter)
        assert (refused["status"], refused["errors"], refused["verifiedAt"]) == ("pending", [held], None)
    failed = checked.recheck(checked.repo.configuration(squatter))
    assert (failed["status"], failed["errors"]) == ("failed", [held]), "the worker fails it at its deadline"
    assert checked.verify_now(manager(squatter), squatter)["status"] == "pending", "check now re-arms it, no more"
    assert checked.resolve_host(domain) == {"slug": owner}
    assert checked.get(manager(owner), owner)["status"] == "verified"
    assert "domain.verified" not in [e["type"] for e in events(context, squatter)]

    # The name is the owner's while verified: removed (or broken), the next proof takes it.
    checked.remove(manager(owner), owner)
    assert checked.verify_now(manager(squatter), squatter)["status"] == "verified"
    assert checked.resolve_host(domain) == {"slug": squatter}


def meet_before_writing(monkeypatch, parties: int) -> threading.Barrier:
    """Make each thread's first look for the domain's verified owner in a unit of work wait for
    the other threads': their transactions have all seen no owner before any writes, so only the
    database can stop a second one from verifying the name too."""
    barrier, met = threading.Barrier(parties, timeout=30), threading.local()
    look = DomainRepository.owner_of_verified

    def owner_of_verified(repo, domain):
        owner = look(repo, domain)
        if repo.session is not None and not getattr(met, "done", False):
            met.done = True
            barrier.wait()
        return owner

    monkeypatch.setattr(DomainRepository, "owner_of_verified", owner_of_verified)
    return barrier


def test_two_checks_that_verify_one_domain_at_once_leave_one_owner(context, checked, zone, slug, domain, monkeypatch):
    rivals = [f"{slug}-a", f"{slug}-b"]
    configs = [checked.set_domain(manager(s), s, {"domain": domain}) for s in rivals]
    publish_tokens(zone, domain, *configs)  # both TXT records present: both checks pass in DNS
    barrier = meet_before_writing(monkeypatch, len(rivals))
    with ThreadPoolExecutor(len(rivals)) as pool:
        answers = list(pool.map(lambda s: checked.verify_now(manager(s), s), rivals))
    assert barrier.n_waiting == 0 and not barrier.broken, "both read before either wrote"
    assert sorted(a["status"] for a in answers) == ["pending", "verified"], answers
    winner, loser = sorted(zip(rivals, answers), key=lambda pair: pair[1]["status"] != "verified")
    assert loser[1]["errors"] == [HELD.format(domain=domain)]
    assert checked.resolve_host(domain) == {"slug": winner[0]}
    assert [checked.get(manager(s), s)["status"] for s in rivals].count("verified") == 1
    assert context.store.db["domains"].count_documents({"domain": domain, "status": "verified"}) == 1


def test_the_unique_index_of_earlier_versions_is_dropped(context):
    domains = context.store.db["domains"]
    domains.drop_index(VERIFIED_DOMAIN_INDEX)
    domains.create_index([("domain", 1)], name=CLAIMED_DOMAIN_INDEX, sparse=True)  # as it was named
    DomainConfig.ensure_indexes()
    indexes = domains.index_information()
    assert CLAIMED_DOMAIN_INDEX not in indexes
    assert indexes[VERIFIED_DOMAIN_INDEX]["unique"] and dict(indexes[VERIFIED_DOMAIN_INDEX]["partialFilterExpression"]) == {"status": "verified"}
    DomainConfig.ensure_indexes()  # and again, with nothing to drop


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


def miss_one_document(monkeypatch) -> list[str]:
    """Make the first read of a workspace's document in a unit of work miss it, as when another
    first PUT of the workspace commits between this one's read and its write; the slugs missed."""
    missed: list[str] = []
    read = DomainRepository.configuration

    def configuration(repo, slug):
        doc = read(repo, slug)
        if repo.session is not None and not missed:
            missed.append(slug)
            return None
        return doc

    monkeypatch.setattr(DomainRepository, "configuration", configuration)
    return missed


def test_the_loser_of_two_first_puts_of_one_workspace_tries_again(context, slug, domain, monkeypatch):
    base = context.service
    base.set_domain(manager(slug), slug, {"domain": domain})  # the winner
    missed = miss_one_document(monkeypatch)
    answer = base.set_domain(manager(slug), slug, {"domain": "www." + domain})
    assert missed == [slug], "the race happened"
    assert answer["domain"] == "www." + domain and answer["status"] == "pending"
    assert base.get(manager(slug), slug) == answer
    assert [e["type"] for e in events(context, slug)] == ["domain.pending", "domain.pending"]
