"""A product team's first hour, in Chromium, as the README tells it: the invitation link
`feedback invite` prints, the first-run setup, a post by a customer, the team's reply and status
change, a changelog entry that mails the post's followers, an API key, and a webhook whose test
delivery reaches a receiver. After the workspace and the invitation (the operator's steps, made
with `feedback invite` as a person would) the test makes no HTTP call of its own: every step is a
page in the browser, and what it checks it reads on the pages, in the mail folder and at the
receiver."""

from __future__ import annotations

import re
import subprocess
import uuid

import pytest
from devstack import _bin
from testkit import wait_for
from testkit.mail import link_in, messages, wait_for_mail

from services.webhooks.tests.receiver import Receiver

from .browsing import DESKTOP, screenshots


@pytest.fixture(scope="module")
def receiver():
    server = Receiver()
    yield server
    server.close()


def printed_invitation(stack, slug: str, email: str) -> str:
    """The link `feedback invite` prints, as the README has it (the operator's token in the
    environment, the platform named by --base-url)."""
    done = subprocess.run([_bin("feedback"), "invite", "--workspace", slug, "--email", email, "--base-url", stack.url],
                          env={**stack.env(), "FEEDBACK_ADMIN_TOKEN": stack.admin_token}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return re.search(r"Invitation link: (\S+)", done.stdout).group(1)


def test_the_first_hour(browser, stack, workspace, maildir, receiver):
    slug = workspace.slug
    site = f"{stack.url}/b/{slug}"
    shots = screenshots()
    owner_email, customer_email = (f"{who}-{uuid.uuid4().hex[:8]}@example.com" for who in ("owner", "customer"))
    link = printed_invitation(stack, slug, owner_email)
    owner = browser.new_context(viewport=DESKTOP).new_page()
    customer = browser.new_context(viewport=DESKTOP).new_page()
    for pg in (owner, customer):
        pg.set_default_timeout(15_000)

    # 1. The owner accepts and sets the workspace up: name, colour, the first board.
    owner.goto(link)
    owner.get_by_role("button", name="Accept the invitation").click()
    owner.wait_for_url(re.compile(r"/admin/setup$"))
    owner.fill("#s-name", "Rocket Co")
    owner.fill("#s-color", "#0f766e")
    owner.fill("#s-board", "Feature requests")
    owner.get_by_role("button", name="Open the board").click()
    owner.wait_for_url(re.compile(r"\?created=feature-requests$"))
    assert owner.locator(".site-header .name").inner_text() == "Rocket Co"

    # 2. A customer signs in by the emailed link and posts an idea (following it as its author).
    customer.goto(site + "/sign-in")
    customer.fill("#si-email", customer_email)
    customer.get_by_role("button", name="Email me a sign-in link").click()
    customer.wait_for_load_state()
    customer.goto(link_in(wait_for_mail(maildir, to=customer_email), f"/b/{slug}/sign-in/email?"))
    customer.get_by_role("button", name="Sign in", exact=True).click()
    customer.wait_for_url(re.compile(re.escape(slug) + r"/?$"))
    customer.goto(site + "/new")
    customer.fill("input[name=title]", "Export to CSV")
    customer.fill("textarea[name=content]", "Our finance team lives in spreadsheets.")
    customer.locator("form.submit button[type=submit]").click()
    customer.wait_for_url(re.compile(r"/p/[0-9a-f]{24}"))
    post_url = customer.url.split("?")[0]

    # 3. The team replies and plans it.
    owner.goto(post_url)
    owner.fill("#comment-new", "Thanks! We are on it.")
    owner.get_by_role("button", name="Comment", exact=True).click()
    owner.wait_for_load_state()
    owner.select_option("#t-status", "planned")
    owner.get_by_role("button", name="Save triage").click()
    owner.wait_for_load_state()
    assert owner.locator(".post .badge[data-status]").first.inner_text() == "Planned"
    customer.reload()
    assert "Thanks! We are on it." in customer.locator(".thread").inner_text()

    # 4. It ships: a changelog entry linking the post, published, mails its follower.
    owner.goto(site + "/admin/changelog")
    owner.get_by_role("link", name="New entry").click()
    owner.wait_for_load_state()
    owner.fill("#cl-title", "CSV export")
    owner.fill("#cl-slug", "csv-export")
    owner.fill("#cl-content", "Every board exports to **CSV**.")
    owner.fill("#cl-q", "export csv")
    owner.get_by_role("button", name="Search").click()
    owner.wait_for_load_state()
    owner.locator("input[name=postIds]").first.check()
    owner.get_by_role("button", name="Publish").click()
    owner.wait_for_load_state()
    assert "Published" in owner.locator("p.notice[role=status]").inner_text()
    shipped = wait_for(lambda: [m for m in messages(maildir) if customer_email in m["To"] and m["Subject"].startswith("Shipped")],
                       timeout=60, what="the follower's mail that the post shipped")
    assert shipped[0]["Subject"] == "Shipped: Export to CSV"
    customer.goto(site + "/changelog")
    assert customer.locator("article.entry h2").first.inner_text() == "CSV export"

    # 5. An API key for the team's scripts, shown once.
    owner.goto(site + "/admin/api-keys")
    owner.get_by_label("Name").fill("Release script")
    owner.get_by_role("button", name="Create the key").click()
    assert owner.locator("[data-new-key]").inner_text().strip().startswith("fbk_")

    # 6. A webhook to the team's tools; its test delivery arrives, signed, and is listed.
    route = receiver.route()
    owner.goto(site + "/admin/webhooks")
    owner.get_by_label("URL").fill(route.url)
    owner.get_by_label("post.created").check()
    owner.get_by_role("button", name="Add the webhook").click()
    route.secrets.append(owner.locator("[data-secret]").inner_text().strip())
    owner.get_by_role("button", name="Send a test event").click()
    owner.wait_for_url(re.compile(r"done=test"))
    delivered = wait_for(lambda: route.of_type("webhook.test"), what="the test delivery")
    assert delivered[0].verified_with == route.secrets

    # 7. The overview counts the hour's work.
    owner.goto(site + "/admin")
    owner.screenshot(path=str(shots / "admin-overview-first-hour.png"), full_page=True)
    assert "Export to CSV" in owner.locator("main").inner_text()
    for pg in (owner, customer):
        pg.context.close()

