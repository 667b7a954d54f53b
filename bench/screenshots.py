"""The board's screenshots in docs/screenshots/ (README, "The board"), made from a seeded workspace.

    .venv/bin/python bench/screenshots.py [--out docs/screenshots] [--url URL --admin-token TOKEN]

Starts its own platform (the lean single-process layout of ``make run``, no rate limits), or uses
a running one given ``--url`` and its operator token. Seeds a workspace as a product team's board
looks after a few weeks: three boards, 30 ideas written by named customers (SSO tokens with
names), their votes and comments, statuses and target months (the roadmap), two published
changelog entries. Then, signed in as one of those customers through the site's own SSO link,
saves the board, a post, the roadmap and the changelog each in the light theme, in the dark
theme chosen with the footer's toggle (its cookie), and on a 390 px phone:
``{board,post,roadmap,changelog}-{light,dark,phone}.png``. Each is the first screen of its page
(not the whole length), its colours reduced to a palette, so a file stays well under 150 kB.

Needs Debian's chromium (/usr/bin/chromium) and Playwright, as the browser tests do.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

import jwt
import requests
from PIL import Image

from harness import NO_RATE_LIMITS, wait_ready

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--font-render-hinting=none"]
DESKTOP = {"width": 1100, "height": 760}
PHONE = {"width": 390, "height": 844}

CUSTOMERS = [
    "Maya Chen", "Daniel Okafor", "Priya Raman", "Lukas Berger", "Sofia Marquez", "Tom Fletcher", "Aiko Tanaka",
    "Grace Mensah", "Oliver Novak", "Hannah Schmidt", "Ravi Patel", "Elena Rossi", "Marcus Lindqvist", "Chloé Martin",
    "Jonas Weber", "Amara Nwosu", "Ben Carter", "Isabel Duarte", "Yusuf Demir", "Nora Eriksen", "Sam Whitaker",
    "Leila Haddad", "Kenji Mori", "Zoe Adams",
]
BOARDS = [("features", "Feature requests"), ("integrations", "Integrations"), ("bugs", "Bug reports")]
# (board, title, content, status, eta, votes): votes are how many customers vote for it.
POSTS = [
    ("features", "Export any report as CSV or Excel",
     "We send the monthly numbers to finance, who live in spreadsheets. Today I copy each table by hand.\n\n"
     "- one click per report\n- keep the filters I applied\n- ideally a scheduled export too", "in-progress", "2027-01", 22),
    ("features", "Dark mode for dashboards", "Our support team works nights; the white dashboards are hard on the eyes.",
     "complete", None, 19),
    ("features", "Scheduled email digests of a dashboard", "Every Monday at 9:00, a PDF of the sales dashboard to the team.",
     "planned", "2027-02", 17),
    ("features", "Share a dashboard with a public link", "Read-only, with an expiry date, for customers without an account.",
     "planned", "2027-03", 15),
    ("features", "Annotations on charts", "Mark a release or a campaign on a time series so the spike explains itself.",
     "under-review", None, 12),
    ("features", "Custom date ranges in comparisons", "Compare this quarter with the same quarter last year, not only with the previous period.",
     "open", None, 11),
    ("features", "Two-factor authentication for every workspace member", "Our security review requires it for all tools.",
     "complete", None, 14),
    ("features", "Keyboard shortcuts for switching dashboards", "", "open", None, 6),
    ("features", "Alerts when a metric crosses a threshold", "Tell me in Slack when sign-ups drop below 50 a day.",
     "in-progress", "2026-12", 16),
    ("features", "Folders for dashboards", "We have 80 dashboards and the list is hard to scan.", "planned", "2027-01", 10),
    ("features", "Bulk edit chart colours", "", "open", None, 3),
    ("features", "Embed a single chart in Notion", "", "under-review", None, 8),
    ("features", "Audit log export", "Our compliance team asks for the audit log every quarter.", "open", None, 5),
    ("features", "Saved filters per user", "", "open", None, 4),
    ("features", "Mobile app for iOS and Android", "Mostly to check the morning numbers on the commute.", "closed", None, 7),
    ("integrations", "Slack integration: post a chart to a channel", "A /chart command would be lovely.",
     "complete", None, 13),
    ("integrations", "HubSpot connector", "Deals and contacts, synced hourly.", "planned", "2027-02", 9),
    ("integrations", "BigQuery as a data source", "", "in-progress", "2026-12", 11),
    ("integrations", "Zapier triggers for new alerts", "", "open", None, 5),
    ("integrations", "Microsoft Teams notifications", "Half of our company is on Teams, not Slack.", "under-review", None, 7),
    ("integrations", "Stripe revenue metrics out of the box", "MRR, churn and expansion without writing SQL.",
     "planned", "2027-03", 12),
    ("integrations", "Google Sheets as a data source", "", "open", None, 6),
    ("integrations", "Single sign-on with Okta", "", "complete", None, 9),
    ("bugs", "Tooltips overlap the legend on small charts", "On a 13\" laptop the tooltip covers the legend of pie charts.",
     "in-progress", None, 4),
    ("bugs", "Time zone of scheduled reports is always UTC", "The report says 9:00 but arrives at 10:00 in Berlin.",
     "planned", "2026-12", 8),
    ("bugs", "CSV import fails on files with a BOM", "Excel's \"CSV UTF-8\" files are refused with \"invalid header\".",
     "complete", None, 3),
    ("bugs", "Dashboard loads slowly with more than 20 charts", "", "under-review", None, 6),
    ("bugs", "Legend colours change after a reload", "", "open", None, 2),
    ("bugs", "Password reset email goes to spam for Outlook users", "", "open", None, 3),
    ("bugs", "Number format ignores the workspace's locale", "We see 1,234.5 where we expect 1.234,5.", "open", None, 2),
]
COMMENTS = {  # on the first post: (customer, text); the team's reply comes from the workspace's API key
    0: [("Daniel Okafor", "Yes please. Excel with the formatting kept would save me an hour every month."),
        ("Priya Raman", "Same here. A scheduled export to a shared drive would be even better."),
        ("team", "Thanks all! CSV is in testing now; Excel follows in January. Scheduled exports are on the roadmap."),
        ("Lukas Berger", "Great news. Will the export keep the column order of the table?")],
    1: [("Aiko Tanaka", "Thank you, this is so much better at night.")],
    8: [("Grace Mensah", "Could alerts also go to email for people who are not on Slack?")],
}
CHANGELOG = [
    ("Dark mode and two-factor authentication", "dark-mode-and-2fa",
     "Dashboards now follow your system's **dark mode**, or choose it in your profile.\n\n"
     "Every member can turn on **two-factor authentication** with an authenticator app; owners can require it.",
     ["Dark mode for dashboards", "Two-factor authentication for every workspace member"]),
    ("Slack, Okta and cleaner CSV imports", "slack-okta-csv",
     "Post any chart to a Slack channel with `/chart`, sign in with Okta, and import CSV files saved by Excel.",
     ["Slack integration: post a chart to a channel", "Single sign-on with Okta", "CSV import fails on files with a BOM"]),
]
SIGNED_IN_AS = "Maya Chen"  # votes for the first, third and fourth post


class Seeder:
    """The workspace written through the public API, as its team and customers would."""

    def __init__(self, url: str, admin_token: str):
        self.api = f"{url}/v1"
        self.http = requests.Session()
        self.slug = f"acme-{uuid.uuid4().hex[:6]}"
        self.key = self.call("POST", "/workspaces", admin_token, json={"slug": self.slug, "name": "Acme Analytics"})["apiKey"]
        self.secret = "screens-" + uuid.uuid4().hex
        self.call("PATCH", self.path("/settings"), self.key,
                  json={"ssoSecret": self.secret, "anonVote": False, "anonComment": False, "primaryColor": "#4f46e5", "theme": "light"})

    def path(self, rest: str) -> str:
        return f"/workspaces/{self.slug}{rest}"

    def call(self, method: str, path: str, key: str | None = None, user: str | None = None, **kw):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if user:
            headers["X-Feedback-User"] = user
        r = self.http.request(method, self.api + path, headers=headers, timeout=30, **kw)
        if r.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
        return r.json() if r.content else {}

    def token(self, name: str) -> str:
        person = name.lower().replace(" ", ".").replace("é", "e")
        return jwt.encode({"id": person, "name": name, "email": f"{person}@example.com", "exp": int(time.time()) + 3600,
                           "aud": self.slug}, self.secret, algorithm="HS256")

    def seed(self) -> dict:
        for slug, name in BOARDS:
            self.call("POST", self.path("/boards"), self.key, json={"slug": slug, "name": name})
        ids = {}
        for i, (board, title, content, status, eta, votes) in enumerate(POSTS):
            author = CUSTOMERS[(i * 7 + 4) % len(CUSTOMERS)]  # Maya, signed in, wrote none of the first few
            post = self.call("POST", self.path("/posts"), user=self.token(author),
                             json={"boardSlug": board, "title": title, "content": content})
            ids[title] = post["id"]
            change = {"statusSlug": status, **({"eta": eta} if eta else {})}
            if status != "open" or eta:
                self.call("PATCH", self.path(f"/posts/{post['id']}"), self.key, json=change)
            voters = [c for c in CUSTOMERS if c != SIGNED_IN_AS][:votes - 1] if votes else []
            if i in (0, 2, 3):
                voters.append(SIGNED_IN_AS)
            for voter in voters:
                self.call("POST", self.path(f"/posts/{post['id']}/vote"), user=self.token(voter))
            for who, text in COMMENTS.get(i, []):
                self.call("POST", self.path(f"/posts/{post['id']}/comments"), self.key if who == "team" else None,
                          None if who == "team" else self.token(who), json={"content": text})
        for title, slug, content, shipped in CHANGELOG:
            self.call("POST", self.path("/changelogs"), self.key,
                      json={"title": title, "slug": slug, "content": content, "postIds": [ids[t] for t in shipped], "publish": True})
        return {"featured": ids[POSTS[0][1]]}


def shoot(url: str, slug: str, featured: str, token: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    base = f"{url}/b/{slug}"
    pages = {"board": "", "post": f"/p/{featured}", "roadmap": "/roadmap", "changelog": "/changelog"}
    saved = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for variant, viewport in (("light", DESKTOP), ("dark", DESKTOP), ("phone", PHONE)):
            context = browser.new_context(viewport=viewport, locale="en-GB", timezone_id="Europe/London",
                                          color_scheme="light")
            pg = context.new_page()
            pg.goto(f"{base}/sso?token={token}")  # the site's own SSO link: confirm, signed in
            pg.get_by_role("button", name="Continue").click()
            pg.wait_for_load_state()
            if variant == "dark":  # the visitor's choice, with the footer's toggle
                pg.get_by_role("group", name="Theme").get_by_role("button", name="Dark", exact=True).click()
            for name, path in pages.items():
                pg.goto(base + path)
                target = out / f"{name}-{variant}.png"
                pg.screenshot(path=str(target))
                # A palette of 256 colours: text and flat colours lose nothing visible, the file a third.
                Image.open(target).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
                saved.append(target)
            context.close()
        browser.close()
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--url", help="a running platform's gateway (else one is started)")
    parser.add_argument("--admin-token", help="the running platform's FEEDBACK_ADMIN_TOKEN")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    stack = None
    if args.url:
        url, admin_token = args.url.rstrip("/"), args.admin_token
        if not admin_token:
            parser.error("--url needs --admin-token")
    else:
        from devstack import LocalStack

        folder = Path(tempfile.mkdtemp(prefix="feedback-screenshots-"))
        (folder / "logs").mkdir()
        stack = LocalStack(layout="single", log_dir=folder / "logs", extra_env=NO_RATE_LIMITS)
        print(f"starting the platform (logs in {folder / 'logs'}) ...", flush=True)
        stack.start()
        url, admin_token = stack.url, stack.admin_token
    try:
        wait_ready(f"{url}/readyz")
        seeder = Seeder(url, admin_token)
        print(f"seeding /b/{seeder.slug} ...", flush=True)
        seeded = seeder.seed()
        for path in shoot(url, seeder.slug, seeded["featured"], seeder.token(SIGNED_IN_AS), args.out):
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}  {path.stat().st_size // 1024} kB")
    finally:
        if stack:
            stack.stop()


if __name__ == "__main__":
    main()
