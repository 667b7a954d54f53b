"""What the widget's API answers, shaped from the public API's answers: only what the panel
shows, with links to the board site."""

from __future__ import annotations


from common import i18n
from common.colors import HEX as HEX_COLOR
from common.colors import long_hex, text_on
from common.i18n import N_

DEFAULT_COLOR = "#4f46e5"
# The launcher's words where the team chose none (the workspaces service's default label): the
# panel's language's.
DEFAULT_LABEL = N_("Feedback")


def config(branding: dict, boards: list[dict], base: str) -> dict:
    """The panel's settings: the workspace, its launcher, its colours and its open boards, in
    the current locale."""
    slug = branding["workspace"]["slug"]
    color = branding.get("primaryColor") or DEFAULT_COLOR
    if not HEX_COLOR.fullmatch(color):
        color = DEFAULT_COLOR
    color = long_hex(color)
    label = branding.get("widgetLabel") or DEFAULT_LABEL
    return {
        "workspace": {"slug": slug, "name": branding["workspace"]["name"]},
        "label": i18n.gettext(label) if label == DEFAULT_LABEL else label,
        "position": branding.get("widgetPosition") or "bottom-right",
        "primaryColor": color,
        "onPrimary": text_on(color),
        "boards": [{"id": b["id"], "name": b["name"]} for b in boards if not b.get("archived")],
        "boardUrl": f"{base}/b/{slug}",
    }


def post(item: dict, base: str, slug: str) -> dict:
    """A post as the panel lists it; its status's name in the current locale (the default
    statuses' names are the catalogs', a team's own stay as written)."""
    status = item.get("status") or None
    return {
        "id": item["id"],
        "title": item["title"],
        "voteCount": item.get("voteCount", 0),
        "voted": bool(item.get("voted")),
        "status": {"name": i18n.gettext(status["name"]) if status.get("name") else "", "color": status.get("color")} if status else None,
        "url": f"{base}/b/{slug}/p/{item['id']}",
    }


def changelog(entries: list[dict], base: str, slug: str) -> list[dict]:
    """Published entries, newest first."""
    published = sorted((e for e in entries if e.get("publishedAt")), key=lambda e: e["publishedAt"], reverse=True)
    return [{"id": e["id"], "title": e["title"], "content": e.get("content", ""), "publishedAt": e["publishedAt"],
             "url": f"{base}/b/{slug}/changelog"} for e in published]


