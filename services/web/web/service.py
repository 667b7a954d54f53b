"""The site's rules: who the visitor is, which API calls each page makes, sessions and CSRF.

Every read and write goes to the public API with the visitor's own identity (an anonymous
id, an SSO user's token or a manager's session API key, kept sealed in the session), so
visibility, permissions and rate limits are the API's. No page makes one API call per post.

Each page's method returns what to answer (``shapes.Page``, ``Redirect`` or ``Asset``). A refusal
of the site's own (no CSRF proof, not a manager, malformed input) raises the kit's error
(``common.errors``); the API's refusal arrives as ``ApiError``. The resources render either as
the error page, in one place.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from dataclasses import dataclass, field
from importlib.resources import files

from pymongo.errors import PyMongoError

from common.errors import BadRequest, Forbidden, NotFound
from common.public_api import CLIENT_HEADER
from common.validation import check
from web import schemas, shapes
from web.api import ApiClient, ApiError
from web.contract import ANON_COOKIE, SESSION_COOKIE
from web.shapes import Asset, Page, Redirect

log = logging.getLogger(__name__)

ANON_ID = re.compile(r"[0-9a-f]{32}")
# What the API key a manager's session holds is called in the workspace's list of keys.
GRANT_NAME = "board session"
# The site's own files (package data) and their types; browsers keep them five minutes.
STATIC_FILES = {"site.css": "text/css; charset=utf-8", "site.js": "text/javascript; charset=utf-8"}
STATIC_MAX_AGE = 300


@dataclass
class Visitor:
    slug: str
    anon_id: str
    kind: str  # "anonymous" | "user" | "manager"
    identity: dict  # the API headers that say who this is (and ``forwarded``)
    csrf: str  # the token of this visitor's forms: the session's, else ``anon_csrf``
    session_id: str | None = None
    cookies: list = field(default_factory=list)  # (name, value, max_age) to set; value None clears
    anon_csrf: str = ""  # bound to the signed anonymous cookie, whoever is signed in
    forwarded: dict = field(default_factory=dict)  # headers every /v1 call of this request carries
    name: str | None = None  # who is signed in, as the page may say it
    grant_id: str | None = None  # a manager session's API key id

    @property
    def is_manager(self) -> bool:
        return self.kind == "manager"


def _sign(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


class Site:
    def __init__(self, api: ApiClient, sessions, config):
        self.api = api
        self.sessions = sessions
        self.config = config
        self.secret = config.cookie_secret

    # ---- who is visiting -------------------------------------------------------------
    def visitor(self, slug: str, cookies: dict, client: str | None = None) -> Visitor:
        """Who is visiting, from the site's cookies. ``client``: the gateway's signed token of
        the visitor's address (``CLIENT_HEADER``), sent back unchanged on every /v1 call, so
        per-address limits count visitors, not the site, and nothing the site says about an
        address is believed."""
        forwarded = {CLIENT_HEADER: client} if client else {}
        fresh = []
        anon_id = self._anon_id(cookies.get(ANON_COOKIE, ""))
        if anon_id is None:
            anon_id = secrets.token_hex(16)
            fresh.append((ANON_COOKIE, f"{anon_id}.{_sign(self.secret, 'anon:' + anon_id)}", 365 * 24 * 3600))
        anon_csrf = _sign(self.secret, "csrf:" + anon_id)[:32]
        sid = cookies.get(SESSION_COOKIE)
        session = self.sessions.find(sid) if sid else None
        if session is not None and session["workspace"] == slug:
            credential = session["credential"]
            if session["kind"] == "manager":
                identity, name = {"Authorization": f"Bearer {credential}"}, None
            else:
                identity, name = {"X-Feedback-User": credential}, shapes.account(credential)["label"]
            return Visitor(slug, anon_id, session["kind"], {**identity, **forwarded}, session["csrf"], sid, fresh,
                           anon_csrf, forwarded, name, session.get("grantId"))
        identity = {"X-Feedback-Anonymous-Id": anon_id, **forwarded}
        return Visitor(slug, anon_id, "anonymous", identity, anon_csrf, None, fresh, anon_csrf, forwarded)

    def _anon_id(self, cookie: str) -> str | None:
        value, _, signature = cookie.partition(".")
        if ANON_ID.fullmatch(value) and hmac.compare_digest(signature, _sign(self.secret, "anon:" + value)):
            return value
        return None

    def check_csrf(self, visitor: Visitor, form: dict, expected: str | None = None) -> None:
        """``expected``: the token the form must carry, the visitor's form token by default."""
        token = form.get("csrf", "")
        if not token or not hmac.compare_digest(token, expected or visitor.csrf):
            raise Forbidden("this form has expired or did not come from this site; reload the page and try again")

    def _require_manager(self, visitor: Visitor) -> None:
        if not visitor.is_manager:
            raise Forbidden("only a signed-in manager can do this")

    def _call(self, visitor: Visitor, method: str, path: str, query=None, payload=None):
        return self.api.call(method, f"/workspaces/{visitor.slug}{path}", visitor.identity, query, payload)

    def _call_as(self, visitor: Visitor, identity: dict, method: str, path: str, query=None, payload=None):
        """A call with a credential that is not (yet) the visitor's session's, for this request."""
        return self.api.call(method, f"/workspaces/{visitor.slug}{path}", {**identity, **visitor.forwarded}, query, payload)

    def _common(self, visitor: Visitor) -> dict:
        """What every page shows: branding and who is signed in (one API call)."""
        branding = self._call(visitor, "GET", "/branding")
        return {"branding": branding, "visitor": visitor, "slug": visitor.slug, "base": f"/b/{visitor.slug}"}

    def _local(self, visitor: Visitor, target: str | None, fallback: str) -> str:
        base = f"/b/{visitor.slug}"
        if target and (target == base or target.startswith(base + "/") or target.startswith(base + "?")) and "//" not in target:
            return target
        return fallback

    # ---- the board ---------------------------------------------------------------------
    def board(self, visitor: Visitor, params: dict) -> Page:
        common = self._common(visitor)
        boards = self._call(visitor, "GET", "/boards")["items"]
        statuses = self._call(visitor, "GET", "/statuses")["items"]
        # Filters are forgiving: an unknown sort or a bad offset shows the default, not an error.
        sort = params.get("sort") if params.get("sort") in schemas.SORTS else schemas.DEFAULT_SORT
        try:
            offset = max(0, min(schemas.OFFSET_MAX, int(params.get("offset") or 0)))
        except ValueError:
            offset = 0
        board = params.get("board") or ""
        status = params.get("status") or ""
        q = (params.get("q") or "").strip()[:schemas.SEARCH_MAX]
        size = self.config.page_size
        page = self._call(visitor, "GET", "/posts", query={
            "board": board, "status": status, "q": q, "sort": schemas.SORTS[sort], "limit": size + 1, "offset": offset,
        })
        posts = page["items"]
        more = len(posts) > size
        state = {"board": board, "status": status, "q": q, "sort": sort}
        return Page("board.html", {
            **common, "boards": boards, "statuses": statuses, "posts": posts[:size], "state": state,
            "sorts": list(schemas.SORTS), "board_names": {b["id"]: b["name"] for b in boards},
            "next_link": shapes.board_link(visitor.slug, state, offset=offset + size) if more else None,
            "prev_link": shapes.board_link(visitor.slug, state, offset=max(0, offset - size)) if offset else None,
            "here": shapes.board_link(visitor.slug, state, offset=offset),
        })

    def vote(self, visitor: Visitor, post_id: str, form: dict):
        self.check_csrf(visitor, form)
        method = "DELETE" if form.get("action") == "unvote" else "POST"
        try:
            self._call(visitor, method, f"/posts/{post_id}/vote")
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "vote")
            raise
        return Redirect(self._local(visitor, form.get("next"), f"/b/{visitor.slug}/p/{post_id}"))

    def sign_in_needed(self, visitor: Visitor, action: str) -> Page:
        return Page("sign_in_needed.html", {**self._common(visitor), "action": action}, 401)

    # ---- one post ----------------------------------------------------------------------
    def post(self, visitor: Visitor, post_id: str, params: dict) -> Page:
        common = self._common(visitor)
        post = self._call(visitor, "GET", f"/posts/{post_id}")
        comments = shapes.thread(self._call(visitor, "GET", f"/posts/{post_id}/comments", query={"limit": 500})["items"])
        context = {**common, "post": post, "comments": comments, "statuses": [], "candidates": None,
                   "merge_q": "", "moderation_states": schemas.MODERATION_STATES}
        if visitor.is_manager:
            context["statuses"] = self._call(visitor, "GET", "/statuses")["items"]
            merge_q = (params.get("merge_q") or "").strip()[:schemas.SEARCH_MAX]
            if merge_q:
                found = self._call(visitor, "GET", "/posts/search", query={"q": merge_q, "limit": 10})["items"]
                context["candidates"] = [p for p in found if p["id"] != post_id]
                context["merge_q"] = merge_q
        return Page("post.html", context)

    def comment(self, visitor: Visitor, post_id: str, form: dict):
        self.check_csrf(visitor, form)
        payload = {"content": (form.get("content") or "").strip()}
        if form.get("parentId"):
            payload["parentId"] = form["parentId"]
        if form.get("isPrivate") and visitor.is_manager:
            payload["isPrivate"] = True
        try:
            created = self._call(visitor, "POST", f"/posts/{post_id}/comments", payload=payload)
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "comment")
            raise
        return Redirect(f"/b/{visitor.slug}/p/{post_id}#c-{created['id']}")

    # ---- roadmap and changelog -------------------------------------------------------
    def roadmap(self, visitor: Visitor, params: dict) -> Page:
        common = self._common(visitor)
        roadmap = self._call(visitor, "GET", "/roadmap", query={"board": params.get("board") or ""})
        return Page("roadmap.html", {**common, "columns": roadmap["columns"]})

    def changelog(self, visitor: Visitor, params: dict) -> Page:
        common = self._common(visitor)
        entries = shapes.published(self._call(visitor, "GET", "/changelogs", query={"limit": 50})["items"])
        ids = {i for e in entries for i in e.get("postIds", [])}
        titles: dict[str, str] = {}
        if ids:  # one page of posts names them all (no call per post); unknown ones link by id
            for p in self._call(visitor, "GET", "/posts", query={"sort": "newest", "limit": 100})["items"]:
                titles[p["id"]] = p["title"]
        return Page("changelog.html", {**common, "entries": entries, "titles": titles})

    # ---- submitting ------------------------------------------------------------------
    def new_post_form(self, visitor: Visitor, params: dict, error: str | None = None, form: dict | None = None) -> Page:
        common = self._common(visitor)
        boards = self._call(visitor, "GET", "/boards")["items"]
        return Page("new.html", {**common, "boards": boards, "error": error, "form": form or {}}, 400 if error else 200)

    def submit(self, visitor: Visitor, form: dict):
        self.check_csrf(visitor, form)
        payload = {"boardSlug": form.get("board") or "", "title": (form.get("title") or "").strip(),
                   "content": form.get("content") or ""}
        try:
            created = self._call(visitor, "POST", "/posts", payload=payload)
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "post")
            if ex.status in (400, 404, 413):
                return self.new_post_form(visitor, {}, ex.message, form)
            raise
        return Redirect(f"/b/{visitor.slug}/p/{created['id']}")

    # ---- signing in --------------------------------------------------------------------
    # A GET never changes who is signed in: the sign-in link only shows whom it would sign in
    # as, and a POST of that page's form (CSRF-checked) does it. A link or an image in a
    # comment cannot sign a viewer in as someone else.
    def sso_confirm(self, visitor: Visitor, token: str) -> Page:
        account = self._check_user_token(visitor, token)
        return Page("sso.html", {**self._common(visitor), "token": token, "account": account,
                                 "csrf": visitor.anon_csrf})

    def sso(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form, visitor.anon_csrf)
        token = form.get("token") or ""
        self._check_user_token(visitor, token)
        return self._start_session(visitor, "user", token)

    def _check_user_token(self, visitor: Visitor, token: str) -> dict:
        if not token:
            raise BadRequest("the sign-in link has no token")
        if not schemas.CREDENTIAL.fullmatch(token):
            raise BadRequest("the sign-in link's token is malformed")
        self._call_as(visitor, {"X-Feedback-User": token}, "GET", "/posts", {"limit": 1})
        return shapes.account(token)

    def manager_sign_in_form(self, visitor: Visitor, error: str | None = None) -> Page:
        return Page("admin_sign_in.html", {**self._common(visitor), "error": error}, 400 if error else 200)

    def manager_sign_in(self, visitor: Visitor, form: dict):
        """The pasted key is exchanged for an API key of its own that expires with the session
        and that sign-out deletes; the pasted key is used once and never kept."""
        self.check_csrf(visitor, form)
        key = (form.get("apiKey") or "").strip()
        refused = "That API key is not a manager key of this workspace."
        if not schemas.CREDENTIAL.fullmatch(key):
            return self.manager_sign_in_form(visitor, refused)
        body = {"name": GRANT_NAME, "role": "manager", "expiresInSeconds": self.config.session_seconds}
        try:  # only a manager of this workspace may create its keys
            grant = self._call_as(visitor, {"Authorization": f"Bearer {key}"}, "POST", "/api-keys", payload=body)
        except ApiError as ex:
            if ex.status in (401, 403):
                return self.manager_sign_in_form(visitor, refused)
            raise
        return self._start_session(visitor, "manager", grant["key"], f"/b/{visitor.slug}/admin/queue", grant["id"])

    def _start_session(self, visitor: Visitor, kind: str, credential: str, then: str | None = None,
                       grant_id: str | None = None) -> Redirect:
        self._end_session(visitor)  # a sign-in always gets a new session id
        sid = secrets.token_urlsafe(32)
        self.sessions.create(sid, kind, visitor.slug, credential, secrets.token_hex(16), self.config.session_seconds, grant_id)
        visitor.cookies.append((SESSION_COOKIE, sid, self.config.session_seconds))
        return Redirect(then or f"/b/{visitor.slug}")

    def _end_session(self, visitor: Visitor) -> None:
        if visitor.session_id:
            self.sessions.delete(visitor.session_id)
        if visitor.grant_id:
            # Best effort: the key expires with the session anyway, and a visitor who signs
            # out is signed out here whatever the API answers.
            try:
                self._call(visitor, "DELETE", f"/api-keys/{visitor.grant_id}")
            except ApiError as ex:
                log.warning("could not delete a signed-out session's API key %s: %s %s", visitor.grant_id, ex.status, ex.message)

    def drop_unsealed_sessions(self) -> None:
        """Sessions stored before credentials were sealed hold a key in clear until they expire:
        delete them (their visitors sign in again)."""
        try:
            dropped = self.sessions.drop_unsealed()
        except PyMongoError as ex:
            log.warning("could not delete sessions stored unsealed: %s", ex)
            return
        if dropped:
            log.info("deleted %d sessions stored before credentials were sealed", dropped)

    def sign_out(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form)
        self._end_session(visitor)
        visitor.cookies.append((SESSION_COOKIE, None, 0))
        return Redirect(f"/b/{visitor.slug}")

    # ---- managers ----------------------------------------------------------------------
    def triage(self, visitor: Visitor, post_id: str, form: dict) -> Redirect:
        self.check_csrf(visitor, form)
        self._require_manager(visitor)
        action = check(form, schemas.TRIAGE)["action"]
        if action == "status":
            self._call(visitor, "PATCH", f"/posts/{post_id}", payload={"statusSlug": form.get("statusSlug") or ""})
        elif action == "moderate":
            self._call(visitor, "PATCH", f"/posts/{post_id}", payload={"moderationState": form["moderationState"]})
        elif action == "merge":
            into = (form.get("intoPostId") or "").strip().rstrip("/").rsplit("/", 1)[-1]
            self._call(visitor, "POST", f"/posts/{post_id}/merge", payload={"intoPostId": into})
        else:  # unmerge
            self._call(visitor, "POST", f"/posts/{post_id}/unmerge")
        return Redirect(self._local(visitor, form.get("next"), f"/b/{visitor.slug}/p/{post_id}"))

    def queue(self, visitor: Visitor, params: dict):
        if not visitor.is_manager:
            return Redirect(f"/b/{visitor.slug}/admin/sign-in")
        common = self._common(visitor)
        posts = self._call(visitor, "GET", "/posts", query={"moderationState": "pending", "sort": "oldest", "limit": 100})["items"]
        return Page("queue.html", {**common, "posts": posts})

    # ---- files the same for every visitor ------------------------------------------------
    def theme_css(self, visitor: Visitor) -> Asset:
        return shapes.theme_css(self._call(visitor, "GET", "/branding"))

    def static_file(self, visitor: Visitor, name: str) -> Asset:
        """One of the site's own files; ``visitor`` is not read (the file is everyone's)."""
        if name not in STATIC_FILES:
            raise NotFound(f"no such file: {name}")
        return Asset((files("web") / "static" / name).read_bytes(), STATIC_FILES[name], STATIC_MAX_AGE)
