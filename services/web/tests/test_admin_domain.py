"""The custom domain page (/admin/domain): enter a domain, see the DNS records to create and
what the checks found, re-check now, remove it; through the gateway without JavaScript, then
in Chromium (axe, 390 px, both themes). DNS answers come from the tests' server on loopback
(``dns_zone``), as in the domains service's own tests."""

from __future__ import annotations

import html
import re
import uuid

import pytest
from testkit import wait_for

from services.domains.tests.helpers import branding_domain, get_domain, publish_records

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, csrf_of, form_csrf, sso_sign_in, team_member


@pytest.fixture
def domain(dns_zone):
    name = f"fb-{uuid.uuid4().hex[:10]}.customer.test"
    yield name
    dns_zone.clear(name)
    dns_zone.clear(f"_feedback-verify.{name}")


def records_shown(page: str) -> dict[str, tuple[str, str]]:
    rows = re.findall(r'<tr data-record="(\w+)">.*?<code class="secret">([^<]*)</code>.*?<code class="secret">([^<]*)</code>', page, re.S)
    return {kind: (html.unescape(name), html.unescape(value)) for kind, name, value in rows}


def test_the_team_sets_checks_and_removes_a_domain(stack, workspace, dns_zone, domain):
    owner = team_member(stack.url, workspace, "domain-owner@example.com")
    base = f"/b/{workspace.slug}/admin/domain"
    page = owner.get("/admin/domain")
    assert page.status_code == 200 and "<h1>Custom domain</h1>" in page.text and "Use this domain" in page.text
    assert "data-record=" not in page.text and "Re-check now" not in page.text
    # a refusal of the API is shown beside the field, with what was typed
    refused = owner.post("/admin/domain", {"csrf": form_csrf(page.text, base), "domain": "https://x.example.com/path"})
    assert refused.status_code == 400 and 'id="domain-refused" class="error" role="alert"' in refused.text
    assert 'value="https://x.example.com/path"' in refused.text and 'aria-invalid="true"' in refused.text
    assert get_domain(workspace)["status"] == "none"
    assert owner.post("/admin/domain", {"domain": domain}).status_code == 403  # no form token
    # a domain: pending, with its records as the API hands them out
    saved = owner.post("/admin/domain", {"csrf": form_csrf(page.text, base), "domain": domain.upper()}, allow_redirects=False)
    assert saved.status_code == 303 and saved.headers["Location"] == base + "?done=set"
    page = owner.get("/admin/domain?done=set")
    config = get_domain(workspace)
    assert config["status"] == "pending" and config["domain"] == domain
    assert "Waiting for DNS" in page.text and "The domain is saved: create its DNS records." in page.text
    assert records_shown(page.text) == {r["type"]: (r["name"], r["value"]) for r in config["records"]}
    # re-checked before the records exist: what the check found is listed
    checked = owner.post("/admin/domain/verify", {"csrf": form_csrf(page.text, base + "/verify")})
    assert checked.status_code == 200 and "Checked just now." in checked.text
    found = re.search(r'<ul class="domain-errors"[^>]*>(.*?)</ul>', checked.text, re.S)
    assert found and f"_feedback-verify.{domain}" in found.group(1), checked.text
    # the records created: verified, and the board's branding names the domain
    publish_records(dns_zone, config)
    checked = owner.post("/admin/domain/verify", {"csrf": csrf_of(checked.text)})
    assert '<span class="badge domain-status status-verified">Verified</span>' in checked.text
    assert 'class="domain-errors"' not in checked.text and "Last verified on" in checked.text
    wait_for(lambda: branding_domain(workspace) == domain, what="branding to show the verified domain")
    # a manager may see and check it too; an end user or anonymous visitor is sent to sign in
    manager = team_member(stack.url, workspace, "domain-manager@example.com", "manager")
    assert domain in manager.get("/admin/domain").text
    user = Visitor(stack.url, workspace.slug)
    sso_sign_in(user, workspace.user_token("domain-reader"))
    for who in (Visitor(stack.url, workspace.slug), user):
        r = who.get("/admin/domain", allow_redirects=False)
        assert r.status_code == 303 and "/sign-in?next=" in r.headers["Location"]
    r = user.post("/admin/domain/remove", {"csrf": csrf_of(user.get("").text)})
    assert r.status_code == 403 and get_domain(workspace)["status"] == "verified"
    # removed: no records, nothing to re-check (the API's refusal is shown)
    page = owner.get("/admin/domain")
    removed = owner.post("/admin/domain/remove", {"csrf": form_csrf(page.text, base + "/remove")}, allow_redirects=False)
    assert removed.status_code == 303 and removed.headers["Location"] == base + "?done=removed"
    assert get_domain(workspace)["status"] == "none"
    wait_for(lambda: branding_domain(workspace) is None, what="branding to drop the removed domain")
    page = owner.get("/admin/domain?done=removed")
    assert "The custom domain is removed." in page.text and "data-record=" not in page.text
    again = owner.post("/admin/domain/verify", {"csrf": csrf_of(page.text)})
    assert again.status_code == 409 and 'role="alert"' in again.text and "no custom domain" in again.text


def test_the_domain_page_in_a_browser(page, stack, workspace, dns_zone, domain):
    """Set a domain in Chromium, create its records, re-check: verified in the API; removing
    asks first (the dialog dismissed, it stays); axe and the width in both themes and sizes."""
    sign_in_as_team(page, workspace, "domain-browser@example.com")
    page.goto(f"{stack.url}/b/{workspace.slug}/admin/domain")
    page.fill("#domain-name", domain)
    page.get_by_role("button", name="Use this domain").click()
    page.wait_for_url(re.compile(r"done=set$"))
    assert page.locator('tr[data-record="txt"] code').first.inner_text() == f"_feedback-verify.{domain}"
    publish_records(dns_zone, get_domain(workspace))
    page.get_by_role("button", name="Re-check now").click()
    page.wait_for_url(re.compile(r"done=checked$"))
    assert page.locator(".domain-status").inner_text() == "Verified"
    assert get_domain(workspace)["status"] == "verified"
    page.get_by_role("button", name=f"Remove {domain}").click()
    assert page.dialogs and domain in page.dialogs[-1]  # asked, and the fixture said no
    assert get_domain(workspace)["status"] == "verified"
    problems = []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        # the refusal beside the field is checked too
        page.goto(f"{stack.url}/b/{workspace.slug}/admin/domain")
        assert page.locator("html").get_attribute("data-theme") == theme
        page.fill("#domain-name", "not a domain")
        page.get_by_role("button", name="Change the domain").click()
        page.locator("#domain-refused").wait_for()
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.screenshot(path=str(screenshots() / f"admin-domain-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"domain {theme}{suffix}")
    assert problems == []
