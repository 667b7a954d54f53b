"""Which pages may call the widget's API from the browser: CORS by the workspace's
``widgetOrigins``, as rules without I/O (the resources apply them).

A browser names the page's origin in ``Origin`` on every cross-origin request (and on a
same-origin one that is not a GET or HEAD). An origin the workspace lists, or the platform's own
(the admin area's preview), is answered with ``Access-Control-Allow-Origin`` naming it; any other
is refused with 403 and no CORS header, so the page can read nothing. A request without
``Origin`` is not a cross-origin browser request: nothing a page could read by it is at stake,
and every permission stays the API's, so it is answered without CORS headers."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
# What a panel's request may carry beyond the simple ones: its JSON body's type and who it is.
ALLOWED_HEADERS = ("Content-Type", "X-Feedback-User", "X-Feedback-Anonymous-Id")
ALLOWED_METHODS = ("GET", "POST", "DELETE")
# Seconds a browser may keep a preflight's answer: an origin removed is refused by the requests
# themselves in any case (each is checked), so this only saves round trips.
PREFLIGHT_MAX_AGE = 600


def origin_key(origin: str | None) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) origin, the port made explicit; None for anything
    that is not one (``null``, a path, credentials, another scheme)."""
    if not origin:
        return None
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path or parts.query or parts.fragment:
        return None
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def is_allowed(origin: str | None, listed: list[str], platform: str | None = None) -> bool:
    """Whether a page of ``origin`` may use the widget: one of the workspace's ``listed``
    origins, or the platform's own (``platform``, its public base URL)."""
    key = origin_key(origin)
    if key is None:
        return False
    platform_key = origin_key(_origin_of(platform)) if platform else None
    return key == platform_key or any(key == origin_key(o) for o in listed)


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def answer_headers(origin: str) -> dict[str, str]:
    """What an answer to an allowed origin carries: that origin (never ``*``: the answer depends
    on it, so caches keep one per origin)."""
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


def preflight_headers(origin: str) -> dict[str, str]:
    """A preflight's answer to an allowed origin: the methods and headers the panel uses."""
    return {
        **answer_headers(origin),
        "Access-Control-Allow-Methods": ", ".join(ALLOWED_METHODS),
        "Access-Control-Allow-Headers": ", ".join(ALLOWED_HEADERS),
        "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE),
    }
