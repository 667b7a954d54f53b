"""What the widget's API answers, shaped from the public API's answers: only what the panel
shows, with links to the board site."""

from __future__ import annotations

import re

HEX_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
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


def long_hex(color: str) -> str:
    """``#rgb`` as ``#rrggbb``; another colour as it is."""
    return "#" + "".join(c * 2 for c in color[1:]) if len(color) == 4 else color


def text_on(background: str) -> str:
    """Black or white, whichever has the larger WCAG contrast ratio with ``background``
    (``#rrggbb``), as the board site picks (web.shapes.text_on): at least 4.5:1 for any colour."""
    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(background[i:i + 2]) for i in (1, 3, 5))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else "#ffffff"
