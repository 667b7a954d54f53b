"""What the widget's API answers, shaped from the public API's answers: only what the panel
shows, with links to the board site."""

from __future__ import annotations


from common.colors import HEX as HEX_COLOR
from common.colors import long_hex, text_on

DEFAULT_COLOR = "#4f46e5"


def config(branding: dict, boards: list[dict], base: str) -> dict:
    """The panel's settings: the workspace, its launcher, its colours and its open boards."""
    slug = branding["workspace"]["slug"]
    color = branding.get("primaryColor") or DEFAULT_COLOR
    if not HEX_COLOR.fullmatch(color):
        color = DEFAULT_COLOR
    color = long_hex(color)
    return {
        "workspace": {"slug": slug, "name": branding["workspace"]["name"]},
        "label": branding.get("widgetLabel") or "Feedback",
        "position": branding.get("widgetPosition") or "bottom-right",
        "primaryColor": color,
        "onPrimary": text_on(color),
        "boards": [{"id": b["id"], "name": b["name"]} for b in boards if not b.get("archived")],
        "boardUrl": f"{base}/b/{slug}",
    }


def post(item: dict, base: str, slug: str) -> dict:
    status = item.get("status") or None
    return {
        "id": item["id"],
        "title": item["title"],
        "voteCount": item.get("voteCount", 0),
        "voted": bool(item.get("voted")),
        "status": {"name": status["name"], "color": status.get("color")} if status else None,
        "url": f"{base}/b/{slug}/p/{item['id']}",
    }


def changelog(entries: list[dict], base: str, slug: str) -> list[dict]:
    """Published entries, newest first."""
    published = sorted((e for e in entries if e.get("publishedAt")), key=lambda e: e["publishedAt"], reverse=True)
    return [{"id": e["id"], "title": e["title"], "content": e.get("content", ""), "publishedAt": e["publishedAt"],
             "url": f"{base}/b/{slug}/changelog"} for e in published]


