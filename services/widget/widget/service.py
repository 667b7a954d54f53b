"""The widget's rules: who may embed it (``origins``) and what each panel request asks of the
public API, as the person the page identified (their SSO token, ``X-Feedback-User``) or as an
anonymous visitor (the random id the browser keeps, ``X-Feedback-Anonymous-Id``). The gateway
checks the token on every ``/v1`` call exactly as for any client (signature, ``exp``, ``aud``);
every permission (``anonSubmit``, ``anonVote``, what a board shows) stays the API's."""

from __future__ import annotations

import threading

from cachetools import TTLCache

from common import i18n
from common.errors import BadRequest, Forbidden
from common.public_api import CLIENT_HEADER, ApiClient, ApiError
from widget import origins, shapes, words

USER_HEADER = "X-Feedback-User"
ANON_HEADER = "X-Feedback-Anonymous-Id"
# Workspaces whose settings one process keeps at once.
SETTINGS_MAX = 10_000
LIST_LIMIT = 20
SIMILAR_LIMIT = 5
# "My requests" are the caller's among the newest posts (the API has no filter by author): its
# most a page holds.
MINE_WITHIN = 100
SORTS = {"top": "top", "newest": "newest"}


class Widget:
    def __init__(self, api: ApiClient, base: str, settings_cache_seconds: float):
        self.api = api
        self.base = base.rstrip("/")
        self._branding: TTLCache[str, dict] = TTLCache(maxsize=SETTINGS_MAX, ttl=settings_cache_seconds)
        self._lock = threading.Lock()

    # ---- who may embed it -------------------------------------------------------------------
    def branding(self, slug: str, client: str | None) -> dict:
        """The workspace's public branding with its widget settings, kept a few seconds (every
        panel request checks its origin against them); ApiError 404 for no such workspace."""
        with self._lock:
            found = self._branding.get(slug)
        if found is None:
            found = self.api.call("GET", f"/workspaces/{slug}/branding", _client(client))
            with self._lock:
                self._branding[slug] = found
        return found

    def check_origin(self, slug: str, origin: str | None, client: str | None) -> dict:
        """The workspace's branding, when a page of ``origin`` may call its widget (or the request
        names no origin: not a cross-origin browser request); Forbidden otherwise."""
        branding = self.branding(slug, client)
        if origin is not None and not origins.is_allowed(origin, branding.get("widgetOrigins") or [], self.base):
            raise Forbidden(f"the origin {origin[:200]} may not embed this workspace's widget: "
                            "a manager lists the sites that may in the widget's settings (widgetOrigins)")
        return branding

    # ---- what the panel asks ------------------------------------------------------------------
    def config(self, slug: str, branding: dict, identity: dict, asked: str | None = None, languages: str | None = None) -> dict:
        """The panel's settings, in its language, with its words (``widget.words``): the page's
        ``data-lang`` (``asked``), else the identified person's own choice, else the browser's
        ``languages`` (as an ``Accept-Language``), among the workspace's; else its default."""
        boards = self.api.call("GET", f"/workspaces/{slug}/boards", identity)["items"]
        locale = i18n.choose(asked=asked, chosen=self._own_locale(slug, identity), accept_language=languages,
                             enabled=branding.get("locales") or (), default=branding.get("defaultLocale"))
        with i18n.using(locale) as language:
            return {**shapes.config(branding, boards, self.base), "locale": language.tag, "dir": language.direction,
                    "messages": words.catalog()}

    def _own_locale(self, slug: str, identity: dict) -> str | None:
        """The language the person of the panel's token chose (None: anonymous, no choice, or
        not a person)."""
        if USER_HEADER not in identity:
            return None
        try:
            return self.api.call("GET", f"/workspaces/{slug}/me", identity).get("locale")
        except ApiError as ex:
            if ex.status in (401, 403, 404):  # no person of theirs to ask: the browser's languages decide
                return None
            raise

    def posts(self, slug: str, identity: dict, sort: str | None) -> dict:
        if sort not in SORTS:
            raise BadRequest("query parameter 'sort' must be 'top' or 'newest'")
        page = self.api.call("GET", f"/workspaces/{slug}/posts", identity, {"sort": SORTS[sort], "limit": LIST_LIMIT})
        return {"items": [shapes.post(p, self.base, slug) for p in page["items"]]}

    def similar(self, slug: str, identity: dict, q: str | None) -> dict:
        q = (q or "").strip()
        if not q:
            return {"items": []}
        page = self.api.call("GET", f"/workspaces/{slug}/posts/search", identity, {"q": q[:200], "limit": SIMILAR_LIMIT})
        return {"items": [shapes.post(p, self.base, slug) for p in page["items"]]}

    def mine(self, slug: str, identity: dict) -> dict:
        page = self.api.call("GET", f"/workspaces/{slug}/posts", identity, {"sort": "newest", "limit": MINE_WITHIN})
        return {"items": [shapes.post(p, self.base, slug) for p in page["items"] if p.get("mine")]}

    def submit(self, slug: str, identity: dict, body) -> dict:
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object: {title, details, boardId}")
        title, details, board = body.get("title"), body.get("details") or "", body.get("boardId")
        if not isinstance(title, str) or not title.strip():
            raise BadRequest("a title is required", errors=[{"field": "title", "message": "a title is required", "code": "required"}])
        if not isinstance(details, str) or not isinstance(board, str) or not board:
            raise BadRequest("details must be text and boardId a board's id")
        created = self.api.call("POST", f"/workspaces/{slug}/posts", identity,
                                payload={"title": title.strip(), "content": details.strip(), "boardId": board})
        return shapes.post(created, self.base, slug)

    def vote(self, slug: str, identity: dict, post_id: str, voted: bool) -> dict:
        post = self.api.call("POST" if voted else "DELETE", f"/workspaces/{slug}/posts/{post_id}/vote", identity)
        return shapes.post(post, self.base, slug)

    def changelog(self, slug: str, identity: dict) -> dict:
        """The published entries, and, for a person the page identified, their last look at them
        as the platform keeps it (their other devices' looks count too); null otherwise."""
        entries = self.api.call("GET", f"/workspaces/{slug}/changelogs", identity, {"limit": 20})["items"]
        return {"items": shapes.changelog(entries, self.base, slug), "seenAt": self._seen(slug, identity, "GET")}

    def seen(self, slug: str, identity: dict) -> dict:
        """The person looked at the changelog now (kept by the notifications service)."""
        return {"seenAt": self._seen(slug, identity, "PUT")}

    def _seen(self, slug: str, identity: dict, method: str) -> str | None:
        if USER_HEADER not in identity:
            return None  # an anonymous visitor's look is their browser's to keep
        try:
            return self.api.call(method, f"/workspaces/{slug}/me/changelog-seen", identity)["seenAt"]
        except ApiError as ex:
            if ex.status == 403:
                return None  # an SSO user without an address: no person to keep it for
            raise


def identity(user_token: str | None, anonymous_id: str | None, client: str | None) -> dict:
    """The headers a ``/v1`` call carries for the panel's user: their token, else their
    anonymous id, and the client token the gateway signed for this request (so budgets and
    failed-authentication counts follow the visitor's address, not the widget service's)."""
    headers = _client(client)
    if user_token:
        headers[USER_HEADER] = user_token
    elif anonymous_id:
        headers[ANON_HEADER] = anonymous_id
    return headers


def _client(client: str | None) -> dict:
    return {CLIENT_HEADER: client} if client else {}
