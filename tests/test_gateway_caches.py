"""The gateway's in-process caches: custom domains' workspaces and credentials' verdicts.

Each is bounded, and past its bound lets the least recently used entries go one by one: the
clients of the moment keep their cached answers however many others came before. The owner's
answers are counted by replacing only its call (``_ask``): what is under test is the caching.
"""

from __future__ import annotations

import falcon.testing
import pytest

from common import auth
from common.config import Settings
from common.errors import Forbidden, Unavailable
from gateway import authn, hosts
from gateway.authn import Authenticator, Refusal
from gateway.hosts import HostRouting


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountedHosts(HostRouting):
    """Host routing whose owner knows ``<slug>.example.com`` as workspace ``<slug>``."""

    def __init__(self, **options):
        super().__init__(Settings(), None, "domains", "/internal/hosts", **options)
        self.asked: list[str] = []
        self.down = False

    def _ask(self, host: str) -> str | None:
        self.asked.append(host)
        if self.down:
            raise Unavailable("custom domain lookup is unavailable, try again shortly")
        slug, _, domain = host.partition(".")
        return slug if domain == "example.com" else None


def test_custom_domains_past_the_bound_keep_the_recent_ones():
    routing = CountedHosts(cache_seconds=60)
    hosts_seen = [f"ws{i}.example.com" for i in range(hosts.CACHE_MAX + 1)]
    for host in hosts_seen:
        assert routing.slug_of(host) == host.split(".")[0]
    recent = hosts_seen[-100:]
    routing.asked.clear()
    for host in recent:
        routing.slug_of(host)
    assert routing.asked == [], "recent hosts are still known"
    routing.slug_of(hosts_seen[0])
    assert routing.asked == [hosts_seen[0]], "the least recently used went first"


def test_custom_domain_answers_none_included_last_host_cache_seconds_and_failures_none():
    clock = Clock()
    routing = CountedHosts(cache_seconds=30, clock=clock)
    assert routing.slug_of("acme.example.com") == "acme"
    assert routing.slug_of("shop.other.org") is None
    clock.now += 29
    assert routing.slug_of("acme.example.com") == "acme" and routing.slug_of("shop.other.org") is None
    assert len(routing.asked) == 2, "both answers cached, 'not a custom domain' too"
    clock.now += 2
    routing.down = True
    with pytest.raises(Unavailable):
        routing.slug_of("acme.example.com")  # expired: asked again
    routing.down = False
    assert routing.slug_of("acme.example.com") == "acme", "a failed lookup is not cached"
    assert routing.asked == ["acme.example.com", "shop.other.org", "acme.example.com", "acme.example.com"]


class CountedAuthenticator(Authenticator):
    """An authenticator whose owner knows every key starting with "good-" and every session
    starting with "fbs_" (a verdict it says not to cache), and no other."""

    def __init__(self):
        super().__init__(Settings(), None, "people", "/internal/identity", gateway_secret="g" * 32)
        self.asked: list[str] = []

    def _ask(self, slug, api_key, user_token):
        self.asked.append(api_key)
        if api_key.startswith("good-"):
            return auth.Caller(kind=auth.MANAGER, workspace=slug, key_id=api_key), True
        if api_key.startswith("fbs_"):
            return auth.Caller(kind=auth.MANAGER, workspace=slug, user_id="person:1", session_id=api_key), False
        return Refusal(Forbidden, "unknown API key"), True


def present(authenticator: Authenticator, key: str):
    req = falcon.testing.create_req(headers={"Authorization": f"Bearer {key}"})
    return authenticator.caller(req, "acme", "192.0.2.1")


def test_verdicts_past_the_bound_keep_the_recent_ones_and_refusals_are_cached():
    authenticator = CountedAuthenticator()
    keys = [f"good-{i}" for i in range(authn.CACHE_MAX + 1)]
    for key in keys:
        assert present(authenticator, key).key_id == key
    authenticator.asked.clear()
    for key in keys[-100:]:
        present(authenticator, key)
    assert authenticator.asked == [], "recent keys are still known"
    for _ in range(3):
        with pytest.raises(Forbidden):
            present(authenticator, "bad-key")
    assert authenticator.asked == ["bad-key"], "a refusal is cached: a bad key cannot hammer the owner"


def test_a_verdict_said_not_cacheable_is_asked_for_every_request():
    authenticator = CountedAuthenticator()
    for _ in range(3):
        assert present(authenticator, "fbs_session").session_id == "fbs_session"
    assert authenticator.asked == ["fbs_session"] * 3, "a session is checked on every request (it may end at any moment)"
