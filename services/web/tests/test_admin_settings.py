"""The admin area's Settings page (/admin/settings: name, logo, colours, theme, who may take part,
brand voice, the SSO secret) and Sign-in page (/admin/authentication, owners: end users' sign-in
methods and the OpenID Connect provider): without JavaScript through the platform, and in
Chromium (the public board shows the change; axe and a 390 px phone in light and dark themes,
screenshots)."""

from __future__ import annotations

import re
from io import BytesIO

import requests
from PIL import Image

from testkit import wait_for

from .browsing import DESKTOP, PHONE, page_problems, screenshots, sign_in_as_team
from .helpers import Visitor, csrf_of, form_csrf, team_member


def png(colour=(200, 30, 30), size=(48, 48)) -> bytes:
    out = BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def settings_of(workspace) -> dict:
    r = workspace.api.get(f"{workspace.path}/settings", key=workspace.key)
    assert r.status_code == 200, r.text
    return r.json()


def main_form(page_html: str, **changes) -> dict:
    """The settings form's fields as the page shows them (checked boxes as "on"), with ``changes``."""
    fields = {"name": re.search(r'id="ws-name" name="name" value="([^"]*)"', page_html).group(1),
              "primaryColor": re.search(r'name="primaryColor" value="([^"]*)"', page_html).group(1),
              "theme": re.search(r'<option value="(\w+)" selected', page_html).group(1),
              "brandVoice": re.search(r'name="brandVoice"[^>]*>([^<]*)<', page_html).group(1)}
    for name in re.findall(r'<input type="checkbox" name="(\w+)" checked>', page_html):
        fields[name] = "on"
    fields.update(changes)
    return {k: v for k, v in fields.items() if v is not None}


def alerts(html: str) -> list[str]:
    return re.findall(r'role="alert"[^>]*>([^<]*)<', html)


def test_an_owner_changes_the_settings_without_javascript(stack, workspace):
    workspace.board()
    owner = team_member(stack.url, workspace, "settings-owner@example.com")
    action = f"/b/{workspace.slug}/admin/settings"
    page = owner.get("/admin/settings")
    assert page.status_code == 200 and "Save settings" in page.text
    assert f'href="{action}" aria-current="page"' in page.text
    assert 'value="#4f46e5"' in page.text and "easy to read" in page.text and "No secret is set." in page.text

    # a change: every field of the main form, then the board and the API show it
    changed = owner.post("/admin/settings", main_form(page.text, csrf=form_csrf(page.text, action), name="Acme Ideas",
                                                      primaryColor="#0f766e", theme="dark", anonVote="on",
                                                      authorVotes=None, brandVoice="Plain words, no hype.",
                                                      erasedUserContent="delete"),
                         allow_redirects=False)
    assert changed.status_code == 303 and changed.headers["Location"] == action + "?done=saved"
    settings = settings_of(workspace)
    assert (settings["primaryColor"], settings["theme"], settings["anonVote"], settings["authorVotes"]) == \
        ("#0f766e", "dark", True, False)
    assert settings["brandVoice"] == "Plain words, no hype." and settings["anonSubmit"] is False
    assert settings["erasedUserContent"] == "delete"
    assert workspace.api.get(workspace.path).json()["name"] == "Acme Ideas"
    shown = owner.get("/admin/settings?done=saved")
    assert 'role="status">Settings saved.' in shown.text and 'value="#0f766e"' in shown.text
    board = Visitor(stack.url, workspace.slug)
    assert "Acme Ideas" in board.get().text and 'data-theme="dark"' in board.get().text
    assert "--primary: #0f766e" in board.get("/theme.css").text
    # The stylesheet's address names the colour: browsers that kept the old one fetch the new at once.
    assert f'href="/b/{workspace.slug}/theme.css?v=0f766e"' in board.get().text
    assert owner.get("/admin/settings?done=<script>").text.count("<script>") == shown.text.count("<script>")

    # a colour white text cannot be read on: saved, with the warning on the page
    light = owner.post("/admin/settings", main_form(shown.text, csrf=csrf_of(shown.text), primaryColor="#fde047"))
    assert light.status_code == 200 and "contrast of 1.3:1, below the 4.5:1" in light.text

    # a refusal of the API is shown beside the form, with what was typed kept
    refused = owner.post("/admin/settings", main_form(light.text, csrf=csrf_of(light.text), name="   ",
                                                      brandVoice="kept text"))
    assert refused.status_code == 400 and alerts(refused.text) and "name" in alerts(refused.text)[0]
    assert re.search(r'id="settings-error"', refused.text) and "kept text" in refused.text
    assert workspace.api.get(workspace.path).json()["name"] == "Acme Ideas"
    # no CSRF proof: refused, nothing changed
    assert owner.post("/admin/settings", main_form(light.text, name="Forged")).status_code == 403
    assert workspace.api.get(workspace.path).json()["name"] == "Acme Ideas"


def test_a_logo_is_uploaded_refused_and_removed_without_javascript(stack, workspace):
    workspace.board()
    manager = team_member(stack.url, workspace, "settings-logo@example.com", "manager")
    page = manager.get("/admin/settings")
    token = csrf_of(page.text)
    upload = manager.url("/admin/settings/logo")
    # a file that is not an image: the API's refusal beside the logo form
    bad = manager.http.post(upload, data={"csrf": token}, files={"logo": ("logo.png", b"not a png", "image/png")}, timeout=30)
    assert bad.status_code == 400 and 'id="logo-error"' in bad.text and "not a readable image/png" in bad.text
    svg = manager.http.post(upload, data={"csrf": token}, files={"logo": ("logo.svg", b"<svg/>", "image/svg+xml")}, timeout=30)
    assert svg.status_code == 400 and "its root is not an &lt;svg&gt; element" in svg.text  # no SVG namespace
    gif = manager.http.post(upload, data={"csrf": token}, files={"logo": ("logo.gif", b"GIF89a", "image/gif")}, timeout=30)
    assert gif.status_code == 415 and "image/svg+xml" in gif.text
    none = manager.http.post(upload, data={"csrf": token}, files={"logo": ("", b"", "application/octet-stream")}, timeout=30)
    assert none.status_code == 400 and "Choose an image file" in none.text
    forged = manager.http.post(upload, files={"logo": ("logo.png", png(), "image/png")}, timeout=30)
    assert forged.status_code == 403 and workspace.api.get(workspace.path).json()["logo"] is None

    data = png()
    done = manager.http.post(upload, data={"csrf": token}, files={"logo": ("logo.png", data, "image/png")}, timeout=30,
                             allow_redirects=False)
    assert done.status_code == 303 and done.headers["Location"].endswith("/admin/settings?done=logo")
    logo = workspace.api.get(workspace.path).json()["logo"]
    assert logo and f"/v1/workspaces/{workspace.slug}/logo?v=" in logo
    assert requests.get(logo, timeout=30).content == data
    assert f'src="{logo}"' in Visitor(stack.url, workspace.slug).get().text  # the board's header shows it
    shown = manager.get("/admin/settings?done=logo")
    assert "Logo uploaded." in shown.text and "Remove the logo" in shown.text

    removed = manager.post("/admin/settings/logo/remove", {"csrf": token})
    assert removed.status_code == 200 and "Logo removed." in removed.text and "Remove the logo" not in removed.text
    assert workspace.api.get(workspace.path).json()["logo"] is None


def test_a_generated_sso_secret_is_shown_once(stack, workspace):
    workspace.board()
    owner = team_member(stack.url, workspace, "settings-sso@example.com")
    page = owner.get("/admin/settings")
    action = f"/b/{workspace.slug}/admin/settings/sso-secret"
    made = owner.post("/admin/settings/sso-secret", {"csrf": form_csrf(page.text, action), "action": "generate"},
                      allow_redirects=False)
    assert made.status_code == 200 and "shown only this once" in made.text
    secret = re.search(r'id="new-sso-secret">([^<]+)<', made.text).group(1)
    assert secret == settings_of(workspace)["ssoSecret"] and len(secret) >= 32
    # never again: the page says only that one is set
    again = owner.get("/admin/settings")
    assert secret not in again.text and "A secret is set." in again.text and "Remove the secret" in again.text
    gone = owner.post("/admin/settings/sso-secret", {"csrf": csrf_of(again.text), "action": "remove"})
    assert gone.status_code == 200 and "No secret is set." in gone.text and settings_of(workspace)["ssoSecret"] is None


def test_outsiders_are_sent_to_sign_in_and_managers_kept_off_the_sign_in_page(stack, workspace):
    workspace.board()
    stranger = Visitor(stack.url, workspace.slug)
    for path in ("/admin/settings", "/admin/authentication"):
        r = stranger.get(path, allow_redirects=False)
        assert r.status_code == 303 and "/sign-in" in r.headers["Location"], path
    token = "not-a-token"  # a stranger has none of the team's; refused either way
    assert stranger.post("/admin/settings", {"csrf": token, "name": "Taken"}).status_code == 403
    assert stranger.post("/admin/settings/sso-secret", {"csrf": token, "action": "generate"}).status_code == 403
    assert stranger.post("/admin/authentication", {"csrf": token, "endUserMethods": "email"}).status_code == 403
    assert workspace.api.get(workspace.path).json()["name"] != "Taken"

    manager = team_member(stack.url, workspace, "settings-manager@example.com", "manager")
    assert manager.get("/admin/settings").status_code == 200
    refused = manager.get("/admin/authentication")
    assert refused.status_code == 403 and "owner" in refused.text
    assert "/admin/authentication" not in manager.get("/admin/settings").text  # not in the navigation
    refused = manager.post("/admin/authentication", {"csrf": csrf_of(manager.get().text), "endUserMethods": "oidc"})
    assert refused.status_code == 403


def test_an_owner_chooses_sign_in_methods_and_a_provider_is_refused_beside_its_form(stack, workspace):
    workspace.board()
    owner = team_member(stack.url, workspace, "signin-owner@example.com")
    action = f"/b/{workspace.slug}/admin/authentication"
    page = owner.get("/admin/authentication")
    assert page.status_code == 200 and f'href="{action}" aria-current="page"' in page.text
    assert "No provider is configured." in page.text
    assert f"/b/{workspace.slug}/sign-in/oidc/callback" in page.text
    assert 'value="email" aria-describedby="method-email-hint" checked' in page.text

    # email links only: the public sign-in settings follow
    done = owner.http.post(owner.url("/admin/authentication"), data=[("csrf", form_csrf(page.text, action)),
                                                                     ("endUserMethods", "email")],
                           timeout=30, allow_redirects=False)
    assert done.status_code == 303 and done.headers["Location"] == action + "?done=methods"
    assert workspace.api.get(f"{workspace.path}/sign-in-settings").json()["endUserMethods"] == ["email"]
    shown = owner.get("/admin/authentication?done=methods")
    assert "Sign-in methods saved." in shown.text
    assert 'value="passkey" aria-describedby="method-passkey-hint">' in shown.text  # unchecked now

    # a provider whose discovery cannot be fetched: the API's refusal beside the form, typed values kept
    refused = owner.post("/admin/authentication/oidc", {"csrf": csrf_of(shown.text), "issuer": "https://idp.invalid",
                                                        "clientId": "board", "clientSecret": "s3cret",
                                                        "teamEmailDomain": "example.com"})
    assert refused.status_code == 400 and 'id="oidc-error"' in refused.text and alerts(refused.text)
    assert 'value="https://idp.invalid"' in refused.text and 'value="example.com"' in refused.text
    assert "s3cret" not in refused.text  # a secret typed is never written back into the page
    assert workspace.api.get(f"{workspace.path}/oidc", key=workspace.key).json()["configured"] is False


def test_settings_change_in_the_browser_and_show_on_the_public_board(browser, page, stack, workspace):
    workspace.board()
    sign_in_as_team(page, workspace, "settings-browser@example.com")
    site = f"{stack.url}/b/{workspace.slug}"
    page.goto(site + "/admin/settings")
    # the colour's live preview and contrast note follow the picker before anything is saved
    page.locator("#primary-color").fill("#fde047")
    note = page.locator("#contrast-note")
    assert "below the 4.5:1" in note.inner_text() and note.get_attribute("class") == "contrast-warning"
    preview = page.locator(".preview-button").evaluate("e => getComputedStyle(e).backgroundColor")
    assert preview == "rgb(253, 224, 71)"
    page.locator("#primary-color").fill("#0f766e")
    assert "easy to read" in note.inner_text()
    page.locator("#ws-name").fill("Teal Ideas")
    page.get_by_role("button", name="Save settings").click()
    page.wait_for_url(re.compile(r"done=saved"))
    assert page.get_by_role("status").inner_text() == "Settings saved."

    # a file past what the platform takes is refused before it is sent; then a logo, through the picker
    page.locator("#logo-file").set_input_files({"name": "big.png", "mimeType": "image/png", "buffer": b"\0" * 600_000})
    assert "the largest logo is" in page.locator("#logo-file").evaluate("input => input.validationMessage")
    page.locator("#logo-file").set_input_files({"name": "logo.png", "mimeType": "image/png", "buffer": png((15, 118, 110))})
    page.get_by_role("button", name="Upload the logo", exact=True).click()
    page.wait_for_url(re.compile(r"done=logo"))

    # the public board, as a visitor who was never here (nothing cached)
    visitor = browser.new_context().new_page()
    visitor.goto(site)
    assert visitor.locator(".site-header .name").inner_text() == "Teal Ideas"
    logo = visitor.locator(".site-header img.logo")
    wait_for(lambda: logo.evaluate("img => img.complete && img.naturalWidth") == 48, what="the logo to load")
    primary = visitor.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--primary').trim()")
    assert primary == "#0f766e"
    visitor.context.close()

    shots, problems = screenshots(), []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.goto(site + "/admin/settings")
            page.screenshot(path=str(shots / f"admin-settings-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"settings {theme}{suffix}")
    assert not problems, "\n".join(map(str, problems))


def test_sign_in_methods_change_in_the_browser_and_the_page_reads_well(page, stack, workspace):
    workspace.board()
    sign_in_as_team(page, workspace, "signin-browser@example.com")
    site = f"{stack.url}/b/{workspace.slug}"
    page.goto(site + "/admin/authentication")
    page.get_by_label("Passkey").uncheck()
    page.get_by_role("button", name="Save the methods").click()
    page.wait_for_url(re.compile(r"done=methods"))
    assert workspace.api.get(f"{workspace.path}/sign-in-settings").json()["endUserMethods"] == ["email"]
    page.get_by_label("Issuer URL").fill("https://idp.invalid")
    page.get_by_label("Client ID").fill("board")
    page.get_by_role("button", name="Connect the provider").click()
    assert page.locator("#oidc-error").is_visible()

    shots, problems = screenshots(), []
    for theme in ("light", "dark"):
        workspace.settings(theme=theme)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            page.set_viewport_size(size)
            page.goto(site + "/admin/authentication")
            page.screenshot(path=str(shots / f"admin-authentication-{theme}{suffix}.png"), full_page=True)
            problems += page_problems(page, f"authentication {theme}{suffix}")
    assert not problems, "\n".join(map(str, problems))
