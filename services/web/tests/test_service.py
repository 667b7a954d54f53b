"""The site's rules in process: cookies, CSRF and sessions (the real local database; no gateway)."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from web.models import Session
from web.service import ANON_COOKIE, SESSION_COOKIE, Forbidden


@pytest.fixture
def site(service_context):
    return service_context("web").site


def test_anonymous_cookie_is_signed_and_csrf_bound_to_it(site):
    first = site.visitor("acme", {})
    (name, value, max_age), = first.cookies
    assert name == ANON_COOKIE and value.startswith(first.anon_id + ".") and max_age > 0
    assert first.identity == {"X-Feedback-Anonymous-Id": first.anon_id} and first.kind == "anonymous"
    again = site.visitor("acme", {ANON_COOKIE: value}, "203.0.113.9")
    assert again.anon_id == first.anon_id and again.cookies == [] and again.csrf == first.csrf
    assert again.identity["X-Forwarded-For"] == "203.0.113.9"
    forged = site.visitor("acme", {ANON_COOKIE: "f" * 32 + "." + value.split(".")[1]})
    assert forged.anon_id != "f" * 32 and forged.cookies  # another id, a new cookie
    site.check_csrf(again, {"csrf": first.csrf})
    for form in ({}, {"csrf": ""}, {"csrf": forged.csrf}):
        with pytest.raises(Forbidden):
            site.check_csrf(again, form)


def test_sessions_rotate_belong_to_one_workspace_and_expire(site):
    visitor = site.visitor("acme", {})
    site._start_session(visitor, "user", "jwt-1")
    sid = visitor.cookies[-1][1]
    assert visitor.cookies[-1][0] == SESSION_COOKIE
    signed_in = site.visitor("acme", {SESSION_COOKIE: sid})
    assert signed_in.kind == "user" and signed_in.identity["X-Feedback-User"] == "jwt-1"
    assert signed_in.csrf != visitor.csrf
    assert site.visitor("other", {SESSION_COOKIE: sid}).kind == "anonymous"
    stored = Session._get_collection().find_one({"credential": "jwt-1"})
    assert stored["sid"] != sid  # only a digest of the cookie is stored
    site._start_session(signed_in, "manager", "key-1")
    new_sid = signed_in.cookies[-1][1]
    assert new_sid != sid and site.visitor("acme", {SESSION_COOKIE: sid}).kind == "anonymous"
    manager = site.visitor("acme", {SESSION_COOKIE: new_sid})
    assert manager.is_manager and manager.identity["Authorization"] == "Bearer key-1"
    short = replace(site.config, session_seconds=1)
    site.config, saved = short, site.config
    try:
        site._start_session(manager, "user", "jwt-2")
    finally:
        site.config = saved
    time.sleep(1.2)
    assert site.visitor("acme", {SESSION_COOKIE: manager.cookies[-1][1]}).kind == "anonymous"
    indexes = Session._get_collection().index_information()
    assert any(i.get("expireAfterSeconds") == 0 and i["key"] == [("expiresAt", 1)] for i in indexes.values())
