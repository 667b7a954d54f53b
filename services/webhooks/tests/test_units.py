"""Pure logic, without the stack: the URL rules under other settings than the stack's, the
retry schedule, Retry-After parsing and the signature format."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest
from standardwebhooks import Webhook

from webhooks.config import WebhooksConfig, load_config
from webhooks.contract import MAX_RETRY_AFTER, RETRY_DELAYS
from webhooks.delivery_client import parse_retry_after
from webhooks.schedule import next_delay
from webhooks.signing import body_bytes, new_secret, signed_headers
from webhooks.urlguard import UrlPolicy, UrlRefused


def test_https_is_required_unless_allowed():
    strict = UrlPolicy(WebhooksConfig(allowed_hosts=("127.0.0.1",)))
    with pytest.raises(UrlRefused, match="must use https"):
        strict.check("http://127.0.0.1:8000/hook")
    assert strict.check("https://127.0.0.1:8443/hook?x=1").path == "/hook?x=1"
    relaxed = UrlPolicy(WebhooksConfig(allow_http=True, allowed_hosts=("127.0.0.1",)))
    target = relaxed.check("http://127.0.0.1/")
    assert (target.port, target.host_header, target.addresses) == (80, "127.0.0.1", ("127.0.0.1",))


def test_allowlist_by_cidr_and_by_name():
    policy = UrlPolicy(WebhooksConfig(allowed_hosts=("10.1.0.0/16", "localhost")))
    assert policy.check("https://10.1.2.3/x").addresses == ("10.1.2.3",)
    with pytest.raises(UrlRefused, match="10.2.0.1, a private address"):
        policy.check("https://10.2.0.1/x")
    assert "127.0.0.1" in policy.check("https://LOCALHOST:9000/x").addresses  # /etc/hosts, by name
    with pytest.raises(UrlRefused, match="loopback"):
        UrlPolicy(WebhooksConfig()).check("https://localhost/x")


def test_public_addresses_pass_without_allowlist():
    target = UrlPolicy(WebhooksConfig()).check("https://93.184.215.14:8443/a/b")
    assert (target.host_header, target.path) == ("93.184.215.14:8443", "/a/b")
    assert UrlPolicy(WebhooksConfig()).check("https://[2606:4700::1111]/").host_header == "[2606:4700::1111]"


def test_schedule_follows_standard_webhooks():
    assert len(RETRY_DELAYS) == 9  # ten attempts in all
    for n, base in enumerate(RETRY_DELAYS, start=1):
        delay = next_delay(n, 1.0)
        assert base <= delay <= base * 1.2
    assert next_delay(len(RETRY_DELAYS) + 1, 1.0) is None
    assert next_delay(3, 0.001) < 2.2  # 30 min scaled down
    assert next_delay(1, 0.0001, retry_after=7) == 7  # Retry-After is a floor, not scaled


def test_retry_after_parsing():
    assert parse_retry_after("120") == 120
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after(str(10 * MAX_RETRY_AFTER)) == MAX_RETRY_AFTER
    date = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=60), usegmt=True)
    assert 55 <= parse_retry_after(date) <= 61


def test_signatures_verify_with_each_active_secret():
    old, new = new_secret(), new_secret()
    assert old.startswith("whsec_") and old != new
    body = body_bytes({"type": "webhook.test", "timestamp": "2026-01-01T00:00:00.000Z", "data": {"ü": 1}})
    headers = signed_headers("msg_1", datetime.now(timezone.utc), body, [new, old])
    assert headers["webhook-signature"].count("v1,") == 2
    for secret in (old, new):
        assert Webhook(secret).verify(body, headers)["data"] == {"ü": 1}


def test_settings_from_environment():
    s = load_config({"WEBHOOK_ALLOWED_HOSTS": "127.0.0.1, hooks.internal", "WEBHOOK_TIMEOUT_SECONDS": "3"})
    assert s.allowed_hosts == ("127.0.0.1", "hooks.internal") and s.timeout == 3 and s.lease == 11
    assert load_config({}) == WebhooksConfig()
    with pytest.raises(SystemExit, match="WEBHOOK_RETRY_SCALE"):
        load_config({"WEBHOOK_RETRY_SCALE": "-1"})


def test_an_idle_dispatcher_sleeps_until_the_earliest_pending_delivery_is_due():
    """Nothing due: the sender looks again when the earliest pending delivery (a retry, a lease
    that runs out) is due, at most IDLE_MAX_SECONDS on, at least WEBHOOK_POLL_SECONDS."""
    from types import SimpleNamespace

    from common.ids import now
    from webhooks.sender import IDLE_MAX_SECONDS, Sender

    def wait(due):
        fake = SimpleNamespace(repo=SimpleNamespace(next_due=lambda: due), settings=SimpleNamespace(poll_seconds=0.2))
        return Sender._idle_wait(fake)

    assert wait(None) == IDLE_MAX_SECONDS  # nothing pending at all
    assert 1.5 < wait(now() + timedelta(seconds=2)) <= 2.0
    assert wait(now() + timedelta(hours=1)) == IDLE_MAX_SECONDS
    assert wait(now() - timedelta(seconds=3)) == 0.2  # overdue: as soon as the poll allows
