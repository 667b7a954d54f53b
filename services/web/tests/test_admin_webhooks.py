"""The admin area's webhooks pages (/admin/webhooks and /admin/webhooks/{id}): without JavaScript
through the platform, and in Chromium with a real receiver on 127.0.0.1 (axe and a 390 px phone
in light and dark themes, screenshots). The stack allows http and 127.0.0.1 (conftest.py)."""

from __future__ import annotations

import re

import pytest
from testkit import wait_for

from services.webhooks.tests.receiver import Receiver, Reply

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, csrf_of, form_csrf, sso_sign_in, team_member


@pytest.fixture(scope="module")
def receiver():
    server = Receiver()
    yield server
    server.close()


def hooks_of(workspace) -> list[dict]:
    r = workspace.api.get(f"{workspace.path}/webhooks", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def deliveries_of(workspace, hook_id: str) -> list[dict]:
    r = workspace.api.get(f"{workspace.path}/webhooks/{hook_id}/deliveries", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def test_the_event_types_route_lists_the_catalog(workspace):
    r = workspace.api.get(f"{workspace.path}/webhooks/event-types", key=workspace.key)
    types = [t["type"] for t in r.json()["items"]]
    assert r.status_code == 200 and {"post.created", "vote.created", "webhook.test", "api_key.created"} <= set(types)
    assert workspace.api.get(f"{workspace.path}/webhooks/event-types").status_code == 401


def test_an_http_url_is_refused_in_production_naming_the_setting_that_allows_it():
    from webhooks.config import WebhooksConfig
    from webhooks.urlguard import UrlPolicy, UrlRefused

    with pytest.raises(UrlRefused) as refused:
        UrlPolicy(WebhooksConfig()).check("http://93.184.215.14/hook")
    assert str(refused.value) == ("must use https (plain http is allowed only where WEBHOOK_ALLOW_HTTP=true is set, "
                                  "for local development)")
    UrlPolicy(WebhooksConfig(allow_http=True)).check("http://93.184.215.14/hook")  # where it is set, it passes


def test_a_manager_adds_tests_rotates_disables_and_deletes_a_webhook_without_javascript(stack, workspace, receiver):
    workspace.board()
    manager = team_member(stack.url, workspace, "hooks-manager@example.com", "manager")
    page = manager.get("/admin/webhooks")
    assert page.status_code == 200 and "No webhooks yet." in page.text and "Add the webhook" in page.text
    assert 'value="post.created"' in page.text and 'value="webhook.test"' in page.text  # the catalog's checkboxes
    action = f"/b/{workspace.slug}/admin/webhooks"
    # a refusal is shown beside the form, with what was typed
    refused = manager.post("/admin/webhooks", {"csrf": form_csrf(page.text, action), "url": "https://10.1.2.3/hook",
                                               "events": "vote.created"})
    assert refused.status_code == 400 and 'role="alert"' in refused.text, refused.text
    assert "10.1.2.3, a private address, which webhooks may not call" in refused.text
    assert 'value="vote.created" checked' in refused.text and 'value="https://10.1.2.3/hook"' in refused.text
    # add one, taking two event types: the secret is on the answering page only
    route = receiver.route()
    body = [("csrf", form_csrf(page.text, action)), ("url", route.url), ("events", "post.created"), ("events", "vote.created")]
    made = manager.http.post(manager.url("/admin/webhooks"), data=body, timeout=30)
    assert made.status_code == 200, made.text
    secret = re.search(r"data-secret>(whsec_[A-Za-z0-9+/=]+)<", made.text).group(1)
    route.secrets.append(secret)
    (hook,) = hooks_of(workspace)
    assert hook["url"] == route.url and hook["events"] == ["post.created", "vote.created"] and not hook["disabled"]
    detail = manager.get(f"/admin/webhooks/{hook['id']}")
    assert detail.status_code == 200 and secret not in detail.text and "No deliveries yet." in detail.text
    assert route.url in manager.get("/admin/webhooks").text
    # a test event: delivered, signed with the secret, and listed with its status code
    base = f"/b/{workspace.slug}/admin/webhooks/{hook['id']}"
    sent = manager.post(f"/admin/webhooks/{hook['id']}/test", {"csrf": form_csrf(detail.text, base + "/test")},
                        allow_redirects=False)
    assert sent.status_code == 303 and sent.headers["Location"].endswith(f"/admin/webhooks/{hook['id']}?done=test")
    arrived = wait_for(lambda: route.of_type("webhook.test"), what="the test delivery")
    assert arrived[0].verified_with == [secret]
    wait_for(lambda: deliveries_of(workspace, hook["id"])[0]["status"] == "succeeded", what="the delivery's outcome")
    shown = manager.get(f"/admin/webhooks/{hook['id']}")
    assert "<span data-status-code>200</span>" in shown.text and "Succeeded" in shown.text
    # resend it: a second attempt arrives with the same webhook-id
    (delivery,) = deliveries_of(workspace, hook["id"])
    resend = f"{base}/deliveries/{delivery['id']}/resend"
    again = manager.post(f"/admin/webhooks/{hook['id']}/deliveries/{delivery['id']}/resend",
                         {"csrf": form_csrf(shown.text, resend)})
    assert again.status_code == 200 and "The delivery is queued again." in again.text
    wait_for(lambda: len(route.of_type("webhook.test")) == 2, what="the resent delivery")
    assert route.of_type("webhook.test")[1].id == arrived[0].id
    # rotate the secret: the new one is shown once, and signs the next delivery
    rotated = manager.post(f"/admin/webhooks/{hook['id']}/rotate", {"csrf": form_csrf(shown.text, base + "/rotate")})
    assert rotated.status_code == 200 and "The new signing secret" in rotated.text
    new_secret = re.search(r"data-secret>(whsec_[A-Za-z0-9+/=]+)<", rotated.text).group(1)
    assert new_secret != secret
    route.secrets.append(new_secret)
    manager.post(f"/admin/webhooks/{hook['id']}/test", {"csrf": form_csrf(shown.text, base + "/test")})
    third = wait_for(lambda: len(route.of_type("webhook.test")) == 3 and route.of_type("webhook.test")[2], what="a third delivery")
    assert new_secret in third.verified_with
    # a failing receiver: the delivery shows its status code, attempts and the next retry
    route.answer(then=Reply(500))
    manager.post(f"/admin/webhooks/{hook['id']}/test", {"csrf": form_csrf(shown.text, base + "/test")})
    wait_for(lambda: deliveries_of(workspace, hook["id"])[0]["attemptCount"] >= 1, what="a failed attempt")
    failing = manager.get(f"/admin/webhooks/{hook['id']}").text
    assert "<span data-status-code>500</span>" in failing
    route.answer(then=Reply(200))
    # disable: no test button, and the API says so; enable again
    off = manager.post(f"/admin/webhooks/{hook['id']}/state", {"csrf": form_csrf(shown.text, base + "/state"), "action": "disable"})
    assert off.status_code == 200 and "The webhook is disabled" in off.text and "Send a test event" not in off.text
    assert hooks_of(workspace)[0]["disabled"] and hooks_of(workspace)[0]["disabledReason"] == "manual"
    # a refusal of the API on the detail page: a test of a disabled webhook
    conflict = manager.post(f"/admin/webhooks/{hook['id']}/test", {"csrf": form_csrf(shown.text, base + "/test")})
    assert conflict.status_code == 409 and 'role="alert"' in conflict.text and "disabled" in conflict.text
    on = manager.post(f"/admin/webhooks/{hook['id']}/state", {"csrf": form_csrf(shown.text, base + "/state"), "action": "enable"})
    assert on.status_code == 200 and "enabled again" in on.text and not hooks_of(workspace)[0]["disabled"]
    # delete (the confirmation is the <details>' form)
    assert "<summary>Delete…</summary>" in shown.text
    gone = manager.post(f"/admin/webhooks/{hook['id']}/delete", {"csrf": form_csrf(shown.text, base + "/delete")},
                        allow_redirects=False)
    assert gone.status_code == 303 and gone.headers["Location"].endswith("/admin/webhooks?done=deleted")
    assert hooks_of(workspace) == [] and "The webhook was deleted" in manager.get("/admin/webhooks?done=deleted").text
    # ids that are not there, and a form without its token
    assert manager.get(f"/admin/webhooks/{hook['id']}").status_code == 404
    assert manager.get("/admin/webhooks/not-an-id").status_code == 404
    assert manager.post("/admin/webhooks", {"url": route.url}).status_code == 403


def test_a_visitor_off_the_team_is_sent_to_sign_in(stack, workspace, receiver):
    workspace.board()
    hook = workspace.api.post(f"{workspace.path}/webhooks", key=workspace.key, json={"url": receiver.route().url}).json()
    anonymous = Visitor(stack.url, workspace.slug)
    for path in ("/admin/webhooks", f"/admin/webhooks/{hook['id']}"):
        r = anonymous.get(path, allow_redirects=False)
        assert r.status_code == 303 and "/sign-in" in r.headers["Location"]
    user = Visitor(stack.url, workspace.slug)
    sso_sign_in(user, workspace.user_token("not-team"))
    assert user.get("/admin/webhooks", allow_redirects=False).status_code == 303
    token = csrf_of(user.get("/account").text)
    assert user.post("/admin/webhooks", {"csrf": token, "url": "https://example.com/x"}).status_code == 403
    assert user.post(f"/admin/webhooks/{hook['id']}/delete", {"csrf": token}).status_code == 403
    assert [h["id"] for h in hooks_of(workspace)] == [hook["id"]]


def test_a_webhook_added_in_the_browser_gets_its_test_delivery_and_the_pages_read_well(page, stack, workspace, receiver):
    workspace.board()
    sign_in_as_team(page, workspace, "hooks-browser@example.com")
    site = f"{stack.url}/b/{workspace.slug}"
    route = receiver.route()
    page.goto(site + "/admin/webhooks")
    page.get_by_label("URL").fill(route.url)
    page.get_by_label("post.created").check()
    page.get_by_role("button", name="Add the webhook").click()
    route.secrets.append(page.locator("[data-secret]").inner_text().strip())
    assert page.get_by_role("button", name="Copy the secret").is_visible()  # the script shows it
    page.screenshot(path=str(screenshots() / "admin-webhook-created-light.png"), full_page=True)
    assert not page_problems(page, "webhook with its new secret")
    assert hooks_of(workspace)[0]["events"] == ["post.created"]
    page.get_by_role("button", name="Send a test event").click()
    page.wait_for_url(re.compile(r"done=test"))
    delivered = wait_for(lambda: route.of_type("webhook.test"), what="the test delivery")
    assert delivered[0].verified_with == route.secrets

    def listed():
        page.reload()
        return page.locator("[data-status-code]").count() and page.locator("[data-status-code]").first.inner_text() == "200"

    wait_for(listed, what="the delivery listed with its status code")
    hook_url = page.url.split("?")[0]
    shots, problems = screenshots(), []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            for name, url in (("webhooks", site + "/admin/webhooks"), ("webhook", hook_url)):
                page.goto(url)
                assert page.locator("html").get_attribute("data-theme") == theme
                page.screenshot(path=str(shots / f"admin-{name}-{theme}{suffix}.png"), full_page=True)
                problems += page_problems(page, f"{name} {theme}{suffix}")
    assert not problems, "\n".join(map(str, problems))
