"""The admin area's Widget page (/b/{slug}/admin/widget), in Chromium: the settings form (origins
one per line, normalised as browsers name them; what the API refuses shown beside the form),
the snippet with the platform's address, and the widget itself live on the page as its preview,
following the saved label and position; axe-clean in light and dark at 320 px."""

from __future__ import annotations

from testkit import create_workspace

from services.web.tests.browsing import page_problems, screenshots, sign_in_as_team


def test_the_team_sets_the_widget_up_and_sees_it_live(stack, api, admin_token, page):
    ws = create_workspace(api, admin_token, name="Acme")
    ws.board("features", "Feature requests")
    sign_in_as_team(page, ws, "owner@example.com")
    page.goto(f"{stack.url}/b/{ws.slug}/admin/widget")
    snippet = page.locator("#widget-snippet").text_content()
    assert snippet == f'<script src="{stack.url}/widget/v1.js" data-workspace="{ws.slug}" async></script>'
    # The preview: the platform's own page may always show the widget, with the default label.
    page.get_by_role("button", name="Feedback").wait_for()

    page.get_by_label("Sites that may show the widget").fill("http://app.example.com")
    page.get_by_role("button", name="Save the widget settings").click()
    assert "widgetOrigins" in page.get_by_role("alert").text_content()
    assert page.get_by_label("Sites that may show the widget").input_value() == "http://app.example.com"

    page.get_by_label("Sites that may show the widget").fill("https://App.Example.com/\n\nhttp://localhost:3000\nhttps://app.example.com")
    page.get_by_label("Button position").select_option(label="Bottom left")
    page.get_by_label("Button label").fill("Ideas?")
    page.get_by_role("button", name="Save the widget settings").click()
    page.get_by_text("Widget settings saved").wait_for()
    settings = api.get(f"{ws.path}/settings", key=ws.key).json()
    assert settings["widgetOrigins"] == ["https://app.example.com", "http://localhost:3000"]
    assert (settings["widgetPosition"], settings["widgetLabel"]) == ("bottom-left", "Ideas?")
    assert page.get_by_label("Sites that may show the widget").input_value() == "https://app.example.com\nhttp://localhost:3000"

    # The preview follows what was saved.
    page.reload()
    page.get_by_role("button", name="Ideas?").wait_for()
    assert page.evaluate("document.querySelector('[data-feedback-widget]').dataset.position") == "bottom-left"

    page.set_viewport_size({"width": 320, "height": 700})
    problems = page_problems(page, "widget page, light")
    page.emulate_media(color_scheme="dark")
    problems += page_problems(page, "widget page, dark")
    page.screenshot(path=screenshots() / "admin-widget-320-dark.png", full_page=True)
    assert problems == []
