"""Pure logic: the status machine and name normalisation (no platform needed)."""

from datetime import datetime, timedelta, timezone

import pytest

from common.errors import BadRequest
from domains import contract as c, names, states
from domains.config import DomainsConfig, load_config
from domains.dns_check import CheckResult

CONFIG = DomainsConfig(check_initial=30, check_max=900, pending_timeout=3600, recheck_interval=600)
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
OK = CheckResult([])
MISSING = CheckResult(["TXT record _feedback-verify.x.example not found"], conclusive=True)
TIMEOUT = CheckResult(["DNS lookup of TXT _feedback-verify.x.example timed out after 3s"], conclusive=False)


def doc(status, **fields):
    return {"status": status, "attempts": 0, "inconclusive": 0, "deadline": T0 + timedelta(hours=1), **fields}


def test_new_domain_is_pending_with_a_deadline():
    fields = states.new_domain(CONFIG, T0)
    assert fields["status"] == c.PENDING and fields["verifiedAt"] is None
    assert fields["deadline"] == T0 + timedelta(seconds=3600)
    assert fields["nextCheckAt"] == T0 + timedelta(seconds=30)


def test_pending_to_verified_and_rechecked_later():
    out = states.after_check(CONFIG, doc(c.PENDING), OK, T0, manual=False)
    assert out.event == c.DOMAIN_VERIFIED
    assert out.changes["status"] == c.VERIFIED and out.changes["verifiedAt"] == T0
    assert out.changes["nextCheckAt"] == T0 + timedelta(seconds=600)


def test_pending_backs_off_then_fails_at_the_deadline():
    out = states.after_check(CONFIG, doc(c.PENDING, attempts=3), MISSING, T0, manual=False)
    assert out.event is None and out.changes["nextCheckAt"] == T0 + timedelta(seconds=240)
    capped = states.after_check(CONFIG, doc(c.PENDING, attempts=10), MISSING, T0, manual=False)
    assert capped.changes["nextCheckAt"] == T0 + timedelta(seconds=900)
    late = T0 + timedelta(hours=2)
    failed = states.after_check(CONFIG, doc(c.PENDING), MISSING, late, manual=False)
    assert failed.event == c.DOMAIN_FAILED and failed.changes["nextCheckAt"] is None


def test_check_now_never_fails_a_domain_and_rearms_a_failed_one():
    late = T0 + timedelta(hours=2)
    assert states.after_check(CONFIG, doc(c.PENDING), MISSING, late, manual=True).event is None
    again = states.after_check(CONFIG, doc(c.FAILED), MISSING, late, manual=True)
    assert again.event == c.DOMAIN_PENDING and again.changes["deadline"] == late + timedelta(seconds=3600)
    assert states.after_check(CONFIG, doc(c.FAILED), OK, late, manual=True).event == c.DOMAIN_VERIFIED


def test_verified_breaks_on_a_definite_answer_only():
    verified = doc(c.VERIFIED, verifiedAt=T0, deadline=None)
    broken = states.after_check(CONFIG, verified, MISSING, T0, manual=False)
    assert broken.event == c.DOMAIN_BROKEN and "verifiedAt" not in broken.changes
    for seen in range(c.INCONCLUSIVE_CHECKS_BEFORE_BROKEN - 1):
        kept = states.after_check(CONFIG, {**verified, "inconclusive": seen}, TIMEOUT, T0, manual=False)
        assert kept.event is None and kept.changes["inconclusive"] == seen + 1
    last = {**verified, "inconclusive": c.INCONCLUSIVE_CHECKS_BEFORE_BROKEN - 1}
    assert states.after_check(CONFIG, last, TIMEOUT, T0, manual=False).event == c.DOMAIN_BROKEN


def test_broken_returns_to_verified_or_fails_at_its_deadline():
    broken = doc(c.BROKEN, verifiedAt=T0)
    assert states.after_check(CONFIG, broken, OK, T0, manual=False).event == c.DOMAIN_VERIFIED
    late = T0 + timedelta(hours=2)
    assert states.after_check(CONFIG, broken, MISSING, late, manual=False).event == c.DOMAIN_FAILED


@pytest.mark.parametrize("raw, expected", [
    ("Feedback.Example.COM.", "feedback.example.com"),
    ("bücher.example", "xn--bcher-kva.example"),
    ("xn--bcher-kva.example", "xn--bcher-kva.example"),
])
def test_names_are_normalised(raw, expected):
    assert names.normalize(raw) == expected


@pytest.mark.parametrize("raw", ["", "10.0.0.1", "[::1]", "example", "a.b.123", "a b.example", "ex_ample.com", "a" * 64 + ".com"])
def test_non_host_names_are_refused(raw):
    with pytest.raises(BadRequest, match="field 'domain'"):
        names.normalize(raw)


def test_longest_domain_leaves_room_for_the_txt_record():
    longest = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * (names.MAX_DOMAIN - 3 * 64)])
    assert len(names.normalize(longest)) == names.MAX_DOMAIN
    assert len(f"{c.TXT_PREFIX}.{longest}") == names.MAX_NAME
    with pytest.raises(BadRequest):
        names.normalize("e" + longest)


def test_settings_default_to_the_public_host():
    from common.config import Settings

    config = load_config(Settings(public_base_url="https://feedback.example.org"), {})
    assert config.platform_domain == "feedback.example.org"
    assert config.cname_target == "domains.feedback.example.org"
    assert config.dns_nameservers == ()
    custom = load_config(Settings(), {"DOMAINS_DNS_NAMESERVERS": "10.0.0.53, 10.0.0.54", "DOMAINS_CNAME_TARGET": "Edge.Example.NET."})
    assert custom.dns_nameservers == ("10.0.0.53", "10.0.0.54") and custom.cname_target == "edge.example.net"
