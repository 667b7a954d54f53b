"""Overview: the admin area's front page. What the workspace's people did lately (posts, votes
and comments a day over the last 30 or 90 days), where its posts stand (by status), the most
voted posts, and while the workspace is new, what is left to set it up.

The charts are drawn here as inline SVG (no script, no chart library): each is an image with a
title and a description saying its numbers, and the day-by-day numbers are in a table beside
it, so a screen reader or a text browser reads what a sighted visitor sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from babel.lists import format_list
from babel.numbers import format_percent

from common import i18n
from common.i18n import _, ngettext
from web.admin.section import Section, SectionResource, status_name
from web.resources import query
from web.service import Visitor

PERIODS = (30, 90)  # the periods offered (?days=); anything else shows the first
METRICS = ("posts", "votes", "comments")  # keys in the API's series, in the order the charts are drawn
TOP = 5  # most voted posts listed
DEFAULT_COLOR = "#4f46e5"  # a new workspace's primary colour (workspaces' default): branding not set yet

# One activity chart's drawing area, in SVG user units (it scales to the width it is given).
CHART_WIDTH, CHART_HEIGHT = 600, 120


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    date: str
    n: int


def activity_chart(series: list[dict], key: str) -> dict:
    """One metric's bars over the period: one bar a day, the tallest day at full height."""
    counts = [day[key] for day in series]
    top = max(counts, default=0)
    slot = CHART_WIDTH / max(len(series), 1)
    gap = slot * 0.2 if slot > 4 else 0
    bars = []
    for i, day in enumerate(series):
        height = 0.0 if not top else max(day[key] / top * (CHART_HEIGHT - 4), 2.0 if day[key] else 0.0)
        bars.append(Bar(round(i * slot + gap / 2, 2), round(CHART_HEIGHT - height, 2), round(slot - gap, 2), round(height, 2),
                        day["date"], day[key]))
    busiest = max(series, key=lambda d: (d[key], d["date"]), default=None)
    return {"key": key, "bars": bars, "total": sum(counts), "max": top, "busiest": busiest if top else None}


def metric_words(key: str, days: int, total: int) -> dict:
    """A chart's words in the reader's language: its label, its title (the metric a day over
    ``days``) and its total as a sentence (each a whole message, for the plural rules of each
    language)."""
    if key == "posts":
        return {"label": _("Posts"),
                "title": ngettext("Posts a day, last %(num)s day", "Posts a day, last %(num)s days", days),
                "in_all": ngettext("%(num)s post in all.", "%(num)s posts in all.", total)}
    if key == "votes":
        return {"label": _("Votes"),
                "title": ngettext("Votes a day, last %(num)s day", "Votes a day, last %(num)s days", days),
                "in_all": ngettext("%(num)s vote in all.", "%(num)s votes in all.", total)}
    return {"label": _("Comments"),
            "title": ngettext("Comments a day, last %(num)s day", "Comments a day, last %(num)s days", days),
            "in_all": ngettext("%(num)s comment in all.", "%(num)s comments in all.", total)}


def status_breakdown(by_status: dict, statuses: list[dict]) -> dict:
    """The posts' shares by status, in the workspace's status order (unknown slugs last), as
    segments of one bar 100 units wide."""
    known = {s["slug"]: s for s in statuses}
    order = [s["slug"] for s in statuses if by_status.get(s["slug"])] + sorted(k for k in by_status if k not in known and by_status[k])
    total = sum(by_status.get(slug, 0) for slug in order)
    rows, x = [], 0.0
    for slug in order:
        n = by_status[slug]
        width = n / total * 100 if total else 0
        status = known.get(slug)
        rows.append({"slug": slug, "name": status_name(status["name"]) if status else slug,
                     "color": status["color"] if status else "#888888", "n": n, "x": round(x, 3), "width": round(width, 3),
                     "percent": format_percent(n / total if total else 0, locale=i18n.current().babel)})
        x += width
    # Each status's share said as a list the reader's language writes ("Open 1 (50%) and Planned 1 (50%)").
    shares = format_list([_("%(status)s %(count)s (%(percent)s)", status=r["name"], count=i18n.number(r["n"]), percent=r["percent"])
                          for r in rows], locale=i18n.current().babel) if rows else ""
    return {"rows": rows, "total": total, "shares": shares}


class OverviewSection(Section):
    path = ""

    def show(self, visitor: Visitor, params: dict):
        if redirect := self.allowed(visitor):
            return redirect
        days = int(params["days"]) if params.get("days") in {str(p) for p in PERIODS} else PERIODS[0]
        activity = self.call(visitor, "GET", "/posts/activity", {"days": days})
        stats = self.call(visitor, "GET", "/posts/stats", {"top": TOP})
        statuses = self.call(visitor, "GET", "/statuses")["items"]
        boards = self.call(visitor, "GET", "/boards")["items"]
        keys = self.call(visitor, "GET", "/api-keys")["items"]
        names = {s["slug"]: status_name(s["name"]) for s in statuses}
        charts = [activity_chart(activity["series"], key) for key in METRICS]
        charts = [{**c, **metric_words(c["key"], days, c["total"])} for c in charts]
        page = self.page(visitor, "overview.html", {
            "days": days, "periods": PERIODS, "activity": activity, "charts": charts,
            "chart_width": CHART_WIDTH, "chart_height": CHART_HEIGHT,
            "breakdown": status_breakdown(stats["byStatus"], statuses),
            "top_posts": [p for p in stats["topVoted"] if p["voteCount"]], "status_names": names,
        })
        # The branding is the layout's already (every page reads it): the checklist asks it there.
        page.context["checklist"] = self.checklist(visitor, page.context["branding"], boards, stats, keys)
        return page

    @staticmethod
    def checklist(visitor: Visitor, branding: dict, boards: list, stats: dict, keys: list) -> list[dict]:
        """What a new workspace sets up, each done or not, with the page that does it."""
        base = f"/b/{visitor.slug}"
        return [
            {"label": _("Create a board"), "done": bool(boards), "href": base + "/admin/boards",
             "hint": _("Boards gather the posts of one kind: feature requests, bugs...")},
            {"label": _("Set your branding"), "done": bool(branding["workspace"].get("logo")) or branding["primaryColor"] != DEFAULT_COLOR,
             "href": base + "/admin/settings", "hint": _("A logo and your colour, so customers know where they are.")},
            {"label": _("Write the first post"), "done": stats["postsCounted"] > 0, "href": base + "/new" if boards else base,
             "hint": _("A first idea shows customers what to write.")},
            {"label": _("Create an API key"), "done": any(k.get("revokedAt") is None for k in keys), "href": base + "/admin/api-keys",
             "hint": _("To send feedback from your product, support desk or scripts.")},
        ]


class Overview(SectionResource):
    section = OverviewSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))
