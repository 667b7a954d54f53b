"""The DNS check itself, against the tests' real DNS server (no platform needed)."""

import pytest

from domains.config import DomainsConfig
from domains.dns_check import DnsChecker
from testkit.dns import free_udp_port

from .helpers import CNAME_TARGET, DNS_TIMEOUT

TOKEN = "feedback-verify-0123456789abcdef"
SHORT_TIMEOUT = 0.5  # for lookups meant to time out


def make_checker(port, timeout=DNS_TIMEOUT):
    return DnsChecker(DomainsConfig(dns_nameservers=("127.0.0.1",), dns_port=port, dns_timeout=timeout, cname_target=CNAME_TARGET))


@pytest.fixture
def checker(zone):
    return make_checker(zone.port)


def publish(zone, domain, token=TOKEN, cname=CNAME_TARGET):
    zone.set(f"_feedback-verify.{domain}", "TXT", f'"{token}"')
    zone.set(domain, "CNAME", f"{cname}.")


def test_both_records_verify(checker, zone, domain):
    publish(zone, domain)
    result = checker.check(domain, TOKEN)
    assert result.ok and result.errors == []


def test_token_among_other_txt_values_verifies(checker, zone, domain):
    publish(zone, domain)
    zone.set(f"_feedback-verify.{domain}", "TXT", '"something-else"', f'"{TOKEN}"')
    assert checker.check(domain, TOKEN).ok


def test_wrong_token(checker, zone, domain):
    publish(zone, domain, token="feedback-verify-wrong")
    result = checker.check(domain, TOKEN)
    assert result.errors == [f'TXT record _feedback-verify.{domain} holds "feedback-verify-wrong", expected "{TOKEN}"']
    assert result.conclusive


def test_missing_txt(checker, zone, domain):
    zone.set(domain, "CNAME", f"{CNAME_TARGET}.")
    result = checker.check(domain, TOKEN)
    assert result.errors == [f"TXT record _feedback-verify.{domain} not found"]
    assert result.conclusive


def test_txt_name_with_other_records_only(checker, zone, domain):
    publish(zone, domain)
    zone.set(f"_feedback-verify.{domain}", "TXT")
    zone.set(f"_feedback-verify.{domain}", "A", "192.0.2.1")  # the name exists, without TXT
    assert checker.check(domain, TOKEN).errors == [f"TXT record _feedback-verify.{domain} not found"]


def test_wrong_cname(checker, zone, domain):
    publish(zone, domain, cname="elsewhere.example.net")
    result = checker.check(domain, TOKEN)
    assert result.errors == [f"CNAME points to elsewhere.example.net, expected {CNAME_TARGET}"]


def test_cname_chain_reaching_the_target_verifies(checker, zone, domain):
    publish(zone, domain, cname=f"cdn.{domain}")
    zone.set(f"cdn.{domain}", "CNAME", f"{CNAME_TARGET}.")
    assert checker.check(domain, TOKEN).ok
    zone.clear(f"cdn.{domain}")


def test_apex_flattened_to_the_targets_addresses_verifies(checker, zone, domain):
    publish(zone, domain)
    zone.set(domain, "CNAME")
    zone.set(domain, "A", "192.0.2.10")
    zone.set(CNAME_TARGET, "A", "192.0.2.10", "192.0.2.11")
    try:
        assert checker.check(domain, TOKEN).ok
        zone.set(domain, "A", "198.51.100.7")
        assert checker.check(domain, TOKEN).errors == [f"CNAME record {domain} not found: point it to {CNAME_TARGET}"]
    finally:
        zone.clear(CNAME_TARGET)


def test_nxdomain(checker, domain):
    result = checker.check(domain, TOKEN)
    assert result.errors == [
        f"TXT record _feedback-verify.{domain} not found",
        f"{domain} does not exist in DNS (NXDOMAIN): create a CNAME record {domain} pointing to {CNAME_TARGET}",
    ]
    assert result.conclusive


def test_silent_server_times_out_into_errors(zone, domain):
    zone.silent(f"_feedback-verify.{domain}")
    zone.silent(domain)
    result = make_checker(zone.port, SHORT_TIMEOUT).check(domain, TOKEN)
    assert result.errors == [
        f"DNS lookup of TXT _feedback-verify.{domain} timed out after {SHORT_TIMEOUT:g}s",
        f"DNS lookup of CNAME {domain} timed out after {SHORT_TIMEOUT:g}s",
    ]
    assert not result.conclusive


def test_servfail_is_an_error_not_an_exception(checker, zone, domain):
    publish(zone, domain)
    zone.servfail(f"_feedback-verify.{domain}")
    result = checker.check(domain, TOKEN)
    assert result.errors == [f"DNS lookup of TXT _feedback-verify.{domain} failed: the nameserver answered SERVFAIL"]
    assert not result.conclusive


def test_unreachable_nameserver_is_an_error(zone, domain):
    result = make_checker(free_udp_port(), SHORT_TIMEOUT).check(domain, TOKEN)
    assert len(result.errors) == 2 and not result.conclusive
    assert all("DNS lookup of" in e for e in result.errors)
