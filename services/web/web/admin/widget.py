"""Widget: the embeddable widget's settings (the sites allowed to embed it, its launcher's
position and words), the snippet to copy into the team's product, and the widget itself live on
this page as the preview (the platform's own origin is always allowed; docs/widget.md)."""

from __future__ import annotations

from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, origin, query
from web.service import Visitor

POSITIONS = (("bottom-right", N_("Bottom right")), ("bottom-left", N_("Bottom left")))  # translated where shown
DONE = {"saved": N_("Widget settings saved: the widget on your pages follows them within seconds.")}


def origins_typed(text: str) -> list[str]:
    """The origins typed one per line, as browsers name them: lower case, no trailing slash, each
    once, blank lines dropped (the API refuses what is still not an origin, naming it)."""
    seen: list[str] = []
    for line in (text or "").splitlines():
        value = line.strip().rstrip("/").lower()
        if value and value not in seen:
            seen.append(value)
    return seen


class WidgetSection(Section):
    path = "/widget"

    def show(self, visitor: Visitor, params: dict, platform: str, refused: str | None = None, status: int = 200,
             typed: dict | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        settings = self.call(visitor, "GET", "/settings")
        values = {"origins": "\n".join(settings.get("widgetOrigins") or []), "position": settings.get("widgetPosition"),
                  "label": settings.get("widgetLabel"), **(typed or {})}
        return self.page(visitor, "widget.html", {
            "values": values, "positions": POSITIONS, "platform": platform, "refused": refused,
            "has_sso_secret": settings.get("ssoSecret") is not None,
            "done": _(DONE[params["done"]]) if params.get("done") in DONE else None,
        }, status)

    def save(self, visitor: Visitor, form: dict, platform: str):
        self.checked(visitor, form)
        typed = {"origins": form.get("origins") or "", "position": form.get("position") or "",
                 "label": (form.get("label") or "").strip()}
        payload = {"widgetOrigins": origins_typed(typed["origins"]), "widgetPosition": typed["position"],
                   "widgetLabel": typed["label"]}
        try:
            self.call(visitor, "PATCH", "/settings", payload=payload)
        except ApiError as ex:
            return self.show(visitor, {}, platform, self.refusal(ex), ex.status, typed)
        return self.redirect(visitor, done="saved")


class Widget(SectionResource):
    section = WidgetSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req), origin(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.save, form(req), origin(req))
