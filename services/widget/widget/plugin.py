"""The widget plugin: the embeddable widget's script and its panel's API, pages the gateway
proxies outside /v1 (``/widget/...``).

Declarative: the gateway and ``feedback init`` read this spec without importing the service's
code. No database: the widget is a client of the public API, like the board site, served by the
kit's WSGI app (so ``make run`` serves it in its one process). The panel's routes let the person's token, the anonymous id
and a CORS preflight's headers through (``Route.headers``); the gateway forwards their OPTIONS
requests, so the service answers preflights itself, from the workspace's ``widgetOrigins``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from widget.config import WidgetConfig
    from widget.service import Widget

R = "widget.resources:"
W = "/widget/v1/{slug}"
# What a panel's request carries beyond a page's usual headers: who it is for (an SSO token, or
# the browser's anonymous id) and, on a preflight, what the request will send.
PANEL_HEADERS = ("X-Feedback-User", "X-Feedback-Anonymous-Id", "Access-Control-Request-Method",
                 "Access-Control-Request-Headers")
PAGES = [
    Route("/widget/v1.js", R + "Script", ("GET",)),
    Route(W + "/config", R + "Config", ("GET",), headers=PANEL_HEADERS),
    Route(W + "/posts", R + "Posts", ("GET", "POST"), headers=PANEL_HEADERS),
    Route(W + "/posts/{postId}/vote", R + "Vote", ("POST", "DELETE"), headers=PANEL_HEADERS),
    Route(W + "/similar", R + "Similar", ("GET",), headers=PANEL_HEADERS),
    Route(W + "/mine", R + "Mine", ("GET",), headers=PANEL_HEADERS),
    Route(W + "/changelog", R + "Changelog", ("GET",), headers=PANEL_HEADERS),
    Route(W + "/changelog/seen", R + "ChangelogSeen", ("POST",), headers=PANEL_HEADERS),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: WidgetConfig
    widget: Widget


def create_context(settings: Settings) -> Context:
    from common.public_api import ApiClient
    from widget.config import load_config
    from widget.service import Widget

    config = load_config(settings)
    widget = Widget(ApiClient(config.api_url, config.api_timeout), settings.public_base_url, config.settings_cache_seconds)
    return Context(settings=settings, store=None, config=config, widget=widget)


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="widget",
        context="widget.plugin:create_context",
        pages=PAGES,
    )
