"""The admin area's API keys page (/admin/api-keys): without JavaScript through the platform, and
in Chromium (axe and a 390 px phone in light and dark themes, screenshots)."""

from __future__ import annotations

import re

import requests
from testkit import wait_for

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, csrf_of, form_csrf, sso_sign_in, team_member


def keys_of(workspace) -> list[dict]:
    r = workspace.api.get(f"{workspace.path}/api-keys", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def test_a_manager_lists_creates_and_revokes_keys_without_javascript(stack, workspace):
    workspace.board()
    manager = team_member(stack.url, workspace, "keys-manager@example.com", "manager")
    page = manager.get("/admin/api-keys")
    assert page.status_code == 200 and "Default manager key" in page.text and "Create the key" in page.text
    assert f'href="/b/{workspace.slug}/admin/api-keys" aria-current="page"' in page.text
    # the workspace's first key has been used by the tests' calls: it shows when, to the minute
    first = next(k for k in keys_of(workspace) if k["name"] == "Default manager key")
    assert first["lastUsedAt"] is not None and first["lastUsedAt"][:16] in manager.get("/admin/api-keys").text
    action = f"/b/{workspace.slug}/admin/api-keys"
    # a refusal of the API is shown beside the form, with what was typed
    refused = manager.post("/admin/api-keys", {"csrf": form_csrf(page.text, action), "name": "x" * 101, "role": "write",
                                               "expires": "3600"})
    assert refused.status_code == 400 and 'role="alert"' in refused.text and "name" in refused.text
    assert 'value="write" selected' in refused.text and 'value="3600" selected' in refused.text
    # a grant of a day: the key is on the answering page, once, and works against the API
    made = manager.post("/admin/api-keys", {"csrf": form_csrf(page.text, action), "name": "Zapier", "role": "read",
                                            "expires": "86400"})
    assert made.status_code == 200, made.text
    key = re.search(r'data-new-key>(fbk_[0-9a-f]{16}_[A-Za-z0-9_-]+)<', made.text).group(1)
    listed = next(k for k in keys_of(workspace) if k["name"] == "Zapier")
    assert listed["role"] == "read" and listed["expiresAt"] is not None and listed["lastUsedAt"] is None
    assert requests.get(f"{stack.url}/v1/api-key", headers={"Authorization": f"Bearer {key}"}, timeout=10).json()["role"] == "read"
    again = manager.get("/admin/api-keys")
    assert key not in again.text and "Zapier" in again.text and listed["prefix"] in again.text
    # its use shows as "last used"
    used = wait_for(lambda: next(k for k in keys_of(workspace) if k["name"] == "Zapier")["lastUsedAt"], what="lastUsedAt")
    assert used[:16] in manager.get("/admin/api-keys").text
    # revoking it (the confirmation is the <details>' form): the key stops working
    revoke = f"/b/{workspace.slug}/admin/api-keys/{listed['id']}/revoke"
    assert '<summary>Revoke…<span class="sr-only"> Zapier</span></summary>' in again.text
    gone = manager.post(f"/admin/api-keys/{listed['id']}/revoke", {"csrf": form_csrf(again.text, revoke)}, allow_redirects=False)
    assert gone.status_code == 303 and gone.headers["Location"].endswith("/admin/api-keys?done=revoked")
    shown = manager.get("/admin/api-keys?done=revoked")
    assert 'role="status">The key was revoked' in shown.text and "Revoked keys (1)" in shown.text
    assert next(k for k in keys_of(workspace) if k["name"] == "Zapier")["revokedAt"] is not None
    wait_for(lambda: requests.get(f"{stack.url}/v1/api-key", headers={"Authorization": f"Bearer {key}"},
                                  timeout=10).status_code == 401, timeout=30, what="the revoked key refused")
    # a key that is not there, and a form without its CSRF token
    assert manager.post("/admin/api-keys/0123456789abcdef/revoke", {"csrf": csrf_of(shown.text)}).status_code == 404
    assert manager.post("/admin/api-keys", {"name": "no token"}).status_code == 403


def test_a_visitor_off_the_team_is_sent_to_sign_in(stack, workspace):
    workspace.board()
    anonymous = Visitor(stack.url, workspace.slug)
    r = anonymous.get("/admin/api-keys", allow_redirects=False)
    assert r.status_code == 303 and "/sign-in" in r.headers["Location"]
    # an end user signed in by SSO: sent to sign in, and their own form token does not let them make a key
    user = Visitor(stack.url, workspace.slug)
    sso_sign_in(user, workspace.user_token("not-team"))
    assert user.get("/admin/api-keys", allow_redirects=False).status_code == 303
    refused = user.post("/admin/api-keys", {"csrf": csrf_of(user.get("/account").text), "name": "sneaky"},
                        allow_redirects=False)
    assert refused.status_code == 403
    assert user.post("/admin/api-keys/0123456789abcdef/revoke", {"csrf": csrf_of(user.get("/account").text)}).status_code == 403
    assert all(k["name"] != "sneaky" for k in keys_of(workspace))


def test_a_key_made_in_the_browser_works_and_the_page_reads_well(page, stack, workspace):
    workspace.board()
    sign_in_as_team(page, workspace, "keys-browser@example.com")
    site = f"{stack.url}/b/{workspace.slug}"
    page.goto(site + "/admin/api-keys")
    page.get_by_label("Name").fill("Browser agent")
    page.get_by_label("Role").select_option("write")
    page.get_by_role("button", name="Create the key").click()
    key = page.locator("[data-new-key]").inner_text().strip()
    assert page.get_by_role("button", name="Copy the key").is_visible()  # the script shows it
    page.screenshot(path=str(screenshots() / "admin-api-keys-created-light.png"), full_page=True)
    assert not page_problems(page, "api-keys with the new key")
    made = requests.post(f"{stack.url}/v1/workspaces/{workspace.slug}/posts", headers={"Authorization": f"Bearer {key}"},
                         json={"boardSlug": "features", "title": "Filed by the browser's key", "content": "Hello"}, timeout=10)
    assert made.status_code == 201, made.text
    page.goto(site)
    assert page.get_by_role("link", name="Filed by the browser's key").is_visible()
    shots, problems = screenshots(), []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.goto(site + "/admin/api-keys")
            page.locator("details.confirm summary").first.click()  # the revoke confirmation, open
            assert page.locator("html").get_attribute("data-theme") == theme
            page.screenshot(path=str(shots / f"admin-api-keys-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"api-keys {theme}{suffix}")
    assert not problems, "\n".join(map(str, problems))
    # revoke in the browser: the confirmation's button
    row = page.locator("tr", has_text="Browser agent")
    row.locator("summary").click()
    row.get_by_role("button", name="Revoke “Browser agent” for good").click()
    page.wait_for_url(re.compile(r"done=revoked"))
    assert page.get_by_role("status").first.inner_text().startswith("The key was revoked")
