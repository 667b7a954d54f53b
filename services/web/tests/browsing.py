"""What the site's browser tests share: Debian's chromium through Playwright, axe-core, a
screenshot folder, and signing in as a new team member.

A test module uses the fixtures by importing them (``from .browsing import browser, page``);
without /usr/bin/chromium, Playwright or axe-core the tests that need them are skipped, with the
reason (`.ci/run` installs all three)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from .helpers import invite

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[3]
AXE = ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1100, "height": 800}


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context's page (no cookies), 15 s for each step; dialogs are dismissed
    and kept in ``page.dialogs``."""
    context = browser.new_context()
    context.set_default_timeout(15_000)
    pg = context.new_page()
    dialogs = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    yield pg
    context.close()


def screenshots() -> Path:
    """Where screenshots go: the test run's log folder, else a temporary one."""
    shots = Path(os.environ.get("FEEDBACK_TEST_LOGS") or tempfile.mkdtemp(prefix="feedback-web-")) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def docs_screenshots() -> Path:
    """Where a screenshot the docs show goes: docs/screenshots when the run is asked to refresh
    them (``FEEDBACK_DOCS_SCREENSHOTS=1``), else the run's screenshot folder, so a test run
    leaves the checkout as it was."""
    if os.environ.get("FEEDBACK_DOCS_SCREENSHOTS") == "1":
        return ROOT / "docs" / "screenshots"
    return screenshots()


def page_problems(pg, name: str) -> list:
    """axe-core's serious and critical violations on the page as it is now, and a page wider
    than the viewport (horizontal scrolling), each as ``(name, what)``."""
    if not AXE.exists():
        pytest.skip(f"axe-core is missing ({AXE}; npm install --prefix .cache/axe axe-core)")
    problems = []
    wide, viewport = pg.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    if wide > viewport:
        problems += [(name, f"{wide} px wide in a {viewport} px window")]
    # Evaluated through the test's own channel (the DevTools protocol), which the page's CSP does
    # not govern: a <script> tag of axe would be refused by it.
    pg.evaluate(AXE.read_text())
    result = pg.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                         ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)}))")
    problems += [(name, v) for v in result if v["impact"] in ("serious", "critical")]
    return problems


def accept_invitation(pg, link: str) -> None:
    """Open an invitation's link and accept it: signed in, on the workspace's board (an owner
    of a workspace without a board: on its first-run setup)."""
    pg.goto(link)
    pg.get_by_role("button", name="Accept the invitation").click()
    pg.wait_for_url(re.compile(r"/b/[a-z0-9-]+(/admin/setup)?$"))


def sign_in_as_team(pg, workspace, email: str, role: str = "owner") -> None:
    """``pg``'s browser signed in as a new team member of ``workspace`` (invited, accepted)."""
    accept_invitation(pg, invite(workspace, email, role))


# Every word the code shows, in the pseudo-locale (``?lang=en-XA``, common.i18n.pseudo), is
# inside ⟦…⟧; what is left is the page's user content or a word the catalogs miss.
_PSEUDO_SPAN = re.compile(r"⟦[^⟧]*⟧")
_WORD = re.compile(r"[A-Za-z]{2,}")
_SHOWN_TEXT = """() => {
  const out = [];
  // Text in another language than the page's (a language's own name in the language menu; the
  // API's English words on the reference) is meant to stay as it is.
  const page = document.documentElement.lang;
  const shown = el => el && !el.closest('script,style,template,[hidden],[aria-hidden="true"] .sr-none')
    && (el.closest('[lang]') || document.documentElement).lang === page
    && getComputedStyle(el).display !== 'none' && getComputedStyle(el).visibility !== 'hidden';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (shown(n.parentElement) && n.textContent.trim()) out.push(n.textContent.trim());
  }
  for (const el of document.querySelectorAll('[placeholder],[aria-label],[title],img[alt],input[type=submit][value]')) {
    if ((el.closest('[lang]') || document.documentElement).lang !== page) continue;
    for (const a of ['placeholder', 'aria-label', 'title', 'alt', 'value'])
      if (el.hasAttribute(a) && (a !== 'value' || el.type === 'submit') && el.getAttribute(a).trim()) out.push(el.getAttribute(a).trim());
  }
  out.push(document.title);
  return out;
}"""


def untranslated(pg, allowed=()) -> list[str]:
    """The page's shown text (and its placeholders, labels, titles, alt texts and title) that the
    pseudo-locale did not mark: a page opened with ``?lang=en-XA`` should show none but its user
    content, the ``allowed`` strings (titles, names, slugs the test made)."""
    left = []
    for text in pg.evaluate(_SHOWN_TEXT):
        rest = _PSEUDO_SPAN.sub(" ", text)
        for kept in sorted(allowed, key=len, reverse=True):
            rest = rest.replace(kept, " ")
        if _WORD.search(rest):
            left.append(text)
    return left


_CUT = """() => {
  let cut = 0;
  for (const el of document.body.querySelectorAll('*')) {
    const style = getComputedStyle(el);
    const hides = ['hidden', 'clip'].includes(style.overflowX) || style.textOverflow === 'ellipsis';
    // A visually hidden text for screen readers (1 px, clipped on purpose) is not cut.
    if (!hides || el.clientWidth <= 1 || !el.textContent.trim()) continue;
    cut = Math.max(cut, el.scrollWidth - el.clientWidth);
  }
  return cut;
}"""


def too_wide(pg) -> int:
    """How many pixels of the page do not show: the page wider than its window (horizontal
    scrolling), or a text wider than a box that hides what overflows it (cut off); 0: all shows."""
    wide, viewport = pg.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    return max(0, wide - viewport, pg.evaluate(_CUT) - 1)
