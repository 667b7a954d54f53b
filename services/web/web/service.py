"""The site's rules: who the visitor is, which API calls each page makes, sessions and CSRF.

Every read and write goes to the public API with the visitor's own identity (an anonymous id,
or the people service's session token the site's cookie holds), so visibility, permissions and
rate limits are the API's. No page makes one API call per post.

Each page's method returns what to answer (``shapes.Page``, ``Redirect``, ``Json`` or ``Asset``).
A refusal of the site's own (no CSRF proof, not a manager, malformed input) raises the kit's
error (``common.errors``); the API's refusal arrives as ``ApiError``. The resources render either
as the error page, in one place.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import re
import secrets
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.resources import files
from base64 import urlsafe_b64decode, urlsafe_b64encode
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from common import i18n
from common.i18n import N_, _
from common.errors import BadRequest, Forbidden, NotFound
from common.public_api import CLIENT_HEADER
from common.validation import check
from web import schemas, shapes, subscriptions
from web.api import ApiClient, ApiError
from web.contract import ANON_COOKIE, DRAFT_COOKIE, LANGUAGE_COOKIE, OIDC_COOKIE, SESSION_COOKIE
from web.preferences import chosen_theme
from web.shapes import Asset, Json, Languages, Page, Redirect

log = logging.getLogger(__name__)

ANON_ID = re.compile(r"[0-9a-f]{32}")
# The site's own files (package data) and their types; browsers keep them five minutes.
STATIC_FILES = {"site.css": "text/css; charset=utf-8", "site.js": "text/javascript; charset=utf-8"}
STATIC_MAX_AGE = 300
# What the API names an erased person's posts and comments by (docs/privacy.md).
ERASED_NAME = N_("Deleted user")
VOTERS_SHOWN = 50  # the voters a post's page lists for the team (the API pages the rest)
# What an unsubscribe link that is not this workspace's (forged, cut short, another board's) shows.
INVALID_UNSUBSCRIBE = N_("This unsubscribe link is not valid for this board: it may have been cut short when it "
                         "was copied. Use the link at the end of the latest email, or sign in and choose what you "
                         "receive on your notification preferences page.")
# How long the browser keeps the state of an OpenID Connect sign-in it started (the people
# service keeps the state itself as long).
OIDC_SECONDS = 600
# An idea typed by a visitor who must sign in to post it is kept this long in their browser
# (DRAFT_COOKIE: compressed and signed), and at most this many characters of cookie: a browser
# keeps about 4 KB per cookie. A longer draft is shown back to copy instead.
DRAFT_SECONDS = 3600
DRAFT_MAX = 3600


@dataclass
class Visitor:
    slug: str
    anon_id: str
    kind: str  # "anonymous" | "user" | "manager"
    identity: dict  # the API headers that say who this is (and ``forwarded``)
    csrf: str  # the token of this visitor's forms: the session's, else ``anon_csrf``
    token: str | None = None  # the people service's session token (the session cookie)
    cookies: list = field(default_factory=list)  # (name, value, max_age) to set; value None clears
    anon_csrf: str = ""  # bound to the signed anonymous cookie, whoever is signed in
    forwarded: dict = field(default_factory=dict)  # headers every /v1 call of this request carries
    origin: str | None = None  # scheme://host the browser is on, as the gateway forwards it
    me: dict = field(default_factory=dict)  # GET /v1/me of a signed-in visitor
    oidc_state: str | None = None  # the OpenID Connect sign-in this browser started
    draft: str | None = None  # the signed idea this browser typed before it was asked to sign in (DRAFT_COOKIE)
    theme: str | None = None  # light | dark | system, as this browser chose (web.preferences); None: the workspace's
    languages: Languages = field(default_factory=lambda: Languages())  # what says which language to answer in
    branding: dict | None = None  # GET /branding, once a request (the language and every page need it)

    @property
    def is_manager(self) -> bool:
        return self.kind == "manager"

    @property
    def is_owner(self) -> bool:
        return self.me.get("role") == "owner"

    @property
    def name(self) -> str | None:
        """Who is signed in, as the page may say it."""
        return self.me.get("name") or self.me.get("email")


def _person(visitor: Visitor, item: dict) -> dict:
    """Who wrote ``item`` (a post or comment) as the page shows them (people.html): the API's
    ``author`` (a person's name and avatar as their sign-in gave them; null for an API key, an
    anonymous visitor, or another end user where the workspace hides customers' names), and
    which items are the reader's (``mine``). One the API does not name is "Customer", or "Team
    member" with the team badge; the reader's own carries "You" for a label."""
    author = item.get("author") or {}
    team = bool(item.get("isTeamMember") or author.get("isTeamMember"))
    name, avatar = author.get("name") or item.get("authorName"), author.get("avatarUrl")
    if name == ERASED_NAME:
        name = _(ERASED_NAME)  # the platform's words for an erased person, not a name: in the reader's language
    if item.get("mine"):
        return {"name": name or visitor.name, "avatarUrl": avatar or visitor.me.get("avatarUrl"), "team": team, "label": _("You")}
    return {"name": name, "avatarUrl": avatar, "team": team, "label": _("Team member") if team else _("Customer")}


def _poster(visitor: Visitor, post: dict) -> dict | None:
    """Who wrote a post, where anyone is named (the API's author, or the reader's own): None
    shows the date alone ("Posted 3 days ago"), not "Customer"."""
    return _person(visitor, post) if post.get("author") or post.get("mine") else None


def _within_window(item: dict) -> bool:
    """Whether the visitor wrote ``item`` (a post or comment, as the API shows it to them) and
    may still change it (``editableUntil``: the API's window)."""
    until = item.get("editableUntil")
    if not item.get("mine") or not until:
        return False
    try:
        return datetime.fromisoformat(until.replace("Z", "+00:00")) > datetime.now(timezone.utc)
    except ValueError:
        return False


def _sign(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def _seconds_until(iso: str | None, at_most: int) -> int:
    """Seconds from now to ``iso`` (the API's expiry), for a cookie's max-age."""
    try:
        until = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return at_most
    left = int((until - datetime.now(timezone.utc)).total_seconds())
    return max(0, min(left, at_most))


class Site:
    def __init__(self, api: ApiClient, config):
        self.api = api
        self.config = config
        self.secret = config.cookie_secret

    # ---- who is visiting -------------------------------------------------------------
    def visitor(self, slug: str, cookies: dict, client: str | None = None, origin: str | None = None,
                languages: Languages | None = None) -> Visitor:
        """Who is visiting, from the site's cookies. ``client``: the gateway's signed token of
        the visitor's address (``CLIENT_HEADER``), sent back unchanged on every /v1 call, so
        per-address limits count visitors, not the site, and nothing the site says about an
        address is believed. ``origin``: where the browser is (links, passkeys and OpenID
        Connect redirects are bound to it by the people service).

        With a session cookie, one ``GET /v1/me`` says who it is: the people service is the
        identity check, the site keeps no session of its own. A 401 means the session ended
        (signed out elsewhere, removed from the team, expired): the cookie is cleared."""
        forwarded = {CLIENT_HEADER: client} if client else {}
        fresh = []
        anon_id = self._anon_id(cookies.get(ANON_COOKIE, ""))
        if anon_id is None:
            anon_id = secrets.token_hex(16)
            fresh.append((ANON_COOKIE, f"{anon_id}.{_sign(self.secret, 'anon:' + anon_id)}", 365 * 24 * 3600))
        anon_csrf = _sign(self.secret, "csrf:" + anon_id)[:32]
        anonymous = Visitor(slug, anon_id, "anonymous", {"X-Feedback-Anonymous-Id": anon_id, **forwarded}, anon_csrf,
                            None, fresh, anon_csrf, forwarded, origin, oidc_state=cookies.get(OIDC_COOKIE) or None,
                            draft=cookies.get(DRAFT_COOKIE) or None, theme=chosen_theme(cookies),
                            languages=languages or Languages())
        token = cookies.get(SESSION_COOKIE) or ""
        if not token:
            return anonymous
        if not schemas.SESSION_TOKEN.fullmatch(token):
            fresh.append((SESSION_COOKIE, None, 0))
            return anonymous
        identity = {"Authorization": f"Bearer {token}", **forwarded}
        try:
            me = self.api.call("GET", "/me", identity)
        except ApiError as ex:
            if ex.status not in (401, 403):
                raise
            fresh.append((SESSION_COOKIE, None, 0))  # the session ended: the visitor is anonymous again
            return anonymous
        if me.get("workspace") != slug:
            return anonymous  # a session of another board: anonymous here, still signed in there
        kind = "manager" if me.get("role") else "user"
        csrf = _sign(self.secret, "csrf:" + token)[:32]
        return Visitor(slug, anon_id, kind, identity, csrf, token, fresh, anon_csrf, forwarded, origin, me,
                       anonymous.oidc_state, anonymous.draft, anonymous.theme, anonymous.languages)

    def anonymous(self, slug: str, cookies: dict, client: str | None = None, languages: Languages | None = None) -> Visitor:
        """The visitor as if nobody were signed in: whom an error page is shown to when the
        session could not be checked."""
        return self.visitor(slug, {k: v for k, v in cookies.items() if k != SESSION_COOKIE}, client, languages=languages)

    def branding(self, visitor: Visitor) -> dict:
        """The workspace's branding (one API call a request, kept on the visitor)."""
        if visitor.branding is None:
            visitor.branding = self._call(visitor, "GET", "/branding")
        return visitor.branding

    def locale(self, visitor: Visitor) -> str:
        """The language to answer ``visitor`` in (docs/languages.md): a link's ``?lang=``, the
        person's own choice, this browser's, its ``Accept-Language`` among the workspace's
        enabled languages, else the workspace's default. A workspace that cannot be read (none
        by that name) offers every language."""
        try:
            branding = self.branding(visitor)
        except ApiError:
            branding = {}
        chosen = visitor.me.get("locale") or visitor.languages.cookie
        return i18n.choose(asked=visitor.languages.asked, chosen=chosen, accept_language=visitor.languages.accept,
                           enabled=branding.get("locales") or (), default=branding.get("defaultLocale"))

    def _anon_id(self, cookie: str) -> str | None:
        value, _unused, signature = cookie.partition(".")
        if ANON_ID.fullmatch(value) and hmac.compare_digest(signature, _sign(self.secret, "anon:" + value)):
            return value
        return None

    def check_csrf(self, visitor: Visitor, form: dict, expected: str | None = None) -> None:
        """``expected``: the token the form must carry, the visitor's form token by default."""
        token = form.get("csrf", "")
        if not token or not hmac.compare_digest(token, expected or visitor.csrf):
            raise Forbidden(_("this form has expired or did not come from this site; reload the page and try again"))

    def _require_manager(self, visitor: Visitor) -> None:
        if not visitor.is_manager:
            raise Forbidden(_("only a signed-in team member can do this"))

    def _call(self, visitor: Visitor, method: str, path: str, query=None, payload=None):
        return self.api.call(method, f"/workspaces/{visitor.slug}{path}", visitor.identity, query, payload)

    def _call_as(self, visitor: Visitor, identity: dict, method: str, path: str, query=None, payload=None):
        """A call with a credential that is not (yet) the visitor's session's, for this request."""
        return self.api.call(method, f"/workspaces/{visitor.slug}{path}", {**identity, **visitor.forwarded}, query, payload)

    def _call_anonymously(self, visitor: Visitor, method: str, path: str, payload=None):
        """A sign-in call: made as nobody, whoever is signed in (a sign-in starts a new session)."""
        return self._call_as(visitor, {"X-Feedback-Anonymous-Id": visitor.anon_id}, method, path, None, payload)

    def _common(self, visitor: Visitor) -> dict:
        """What every page shows: branding and who is signed in (one API call)."""
        return {"branding": self.branding(visitor), "visitor": visitor, "slug": visitor.slug, "base": f"/b/{visitor.slug}"}

    def _local(self, visitor: Visitor, target: str | None, fallback: str) -> str:
        base = f"/b/{visitor.slug}"
        if target and (target == base or target.startswith(base + "/") or target.startswith(base + "?")) \
                and "//" not in target and "\\" not in target:
            return target
        return fallback

    # ---- the board ---------------------------------------------------------------------
    def board(self, visitor: Visitor, params: dict, first_board: dict | None = None, status: int = 200) -> Page:
        common = self._common(visitor)
        boards = self._call(visitor, "GET", "/boards")["items"]
        if not boards:  # a new workspace: nothing to list or filter (a post is always on a board)
            return Page("board.html", {**common, "boards": [], "first_board": first_board or first_board_form("board")},
                        status)
        statuses = self._call(visitor, "GET", "/statuses")["items"]
        # The team also sorts by score and filters by tag (the tags: the triage settings'); the
        # public board is as it was, its posts showing their tags and ETA.
        sorts = schemas.TEAM_SORTS if visitor.is_manager else schemas.SORTS
        tags = self._call(visitor, "GET", "/triage")["tags"] if visitor.is_manager else []
        # Filters are forgiving: an unknown sort, tag or a bad offset shows the default, not an error.
        sort = params.get("sort") if params.get("sort") in sorts else schemas.DEFAULT_SORT
        tag = params.get("tag") if any(t["slug"] == params.get("tag") for t in tags) else ""
        try:
            offset = max(0, min(schemas.OFFSET_MAX, int(params.get("offset") or 0)))
        except ValueError:
            offset = 0
        board = params.get("board") or ""
        status = params.get("status") or ""
        q = (params.get("q") or "").strip()[:schemas.SEARCH_MAX]
        size = self.config.page_size
        page = self._call(visitor, "GET", "/posts", query={
            "board": board, "status": status, "q": q, "sort": sorts[sort], "tag": tag, "limit": size + 1, "offset": offset,
        })
        posts = page["items"]
        for post in posts:
            post["person"] = _poster(visitor, post)
        more = len(posts) > size
        state = {"board": board, "status": status, "q": q, "sort": sort, "tag": tag}
        return Page("board.html", {
            **common, "boards": boards, "statuses": statuses, "posts": posts[:size], "state": state, "tags": tags,
            "sorts": list(sorts), "board_names": {b["id"]: b["name"] for b in boards},
            # The sort tabs and the status chips are links (they work without a script): each
            # keeps the other filters and starts at the first page.
            "sort_links": [(s, shapes.board_link(visitor.slug, state, sort=s)) for s in sorts],
            # (slug, name, link, status): the first, every status, is named by the template.
            "status_links": [("", "", shapes.board_link(visitor.slug, state, status=""), None)] + [
                (s["slug"], s["name"], shapes.board_link(visitor.slug, state, status=s["slug"]), s) for s in statuses],
            "next_link": shapes.board_link(visitor.slug, state, offset=offset + size) if more else None,
            "prev_link": shapes.board_link(visitor.slug, state, offset=max(0, offset - size)) if offset else None,
            "here": shapes.board_link(visitor.slug, state, offset=offset),
            "created": _named(boards, params.get("created")),
            "deleted": params.get("done") == "deleted",
        })

    def vote(self, visitor: Visitor, post_id: str, form: dict):
        self.check_csrf(visitor, form)
        method = "DELETE" if form.get("action") == "unvote" else "POST"
        try:
            self._call(visitor, method, f"/posts/{post_id}/vote")
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "vote", f"/b/{visitor.slug}/p/{post_id}")
            if ex.status == 409:  # merged meanwhile: its page says into which post
                return Redirect(f"/b/{visitor.slug}/p/{post_id}")
            raise
        return Redirect(self._local(visitor, form.get("next"), f"/b/{visitor.slug}/p/{post_id}"))

    def sign_in_needed(self, visitor: Visitor, action: str, then: str | None = None, draft: dict | None = None,
                       kept: bool = False) -> Page:
        """Why the visitor must sign in, and the sign-in page's link, which brings them back to
        ``then`` (the board if None). ``draft``: the idea they typed (``kept``: in this browser,
        to fill the form again after signing in; else shown to copy)."""
        base = f"/b/{visitor.slug}"
        sign_in = f"{base}/sign-in" + (f"?next={quote(then, safe='')}" if then else "")
        return Page("sign_in_needed.html", {**self._common(visitor), "action": action, "sign_in": sign_in,
                                            "draft": draft, "kept": kept}, 401)

    # ---- one post ----------------------------------------------------------------------
    def post(self, visitor: Visitor, post_id: str, params: dict) -> Page:
        common = self._common(visitor)
        post = self._call(visitor, "GET", f"/posts/{post_id}")
        comments = shapes.thread(self._call(visitor, "GET", f"/posts/{post_id}/comments", query={"limit": 500})["items"])
        # The custom fields' names are the triage settings' (the public fields for everyone, every
        # field for the team): read when the post has a value to name or the triage form is shown.
        settings = {"tags": [], "fields": []}
        if post.get("fields") or visitor.is_manager:
            settings = self._call(visitor, "GET", "/triage")
        post["can_edit"] = _within_window(post)
        post["can_delete"] = post["can_edit"] or visitor.is_manager
        post["person"] = _poster(visitor, post)
        for c in comments:
            c["can_edit"] = not c.get("deleted") and _within_window(c)
            c["can_delete"] = not c.get("deleted") and (c["can_edit"] or visitor.is_manager)
            c["person"] = _person(visitor, c)
        context = {**common, "post": post, "comments": comments, "statuses": [], "candidates": None,
                   "merge_q": "", "moderation_states": schemas.MODERATION_STATES,
                   "following": self._following(visitor, post_id), "settings": settings, "members": [],
                   "custom_fields": shapes.custom_fields(settings["fields"], post.get("fields") or {}),
                   "done": params.get("done"), "voters": None,
                   "history": self._call(visitor, "GET", f"/posts/{post_id}/history")["items"]}
        if visitor.is_manager:
            context["voters"] = self._call(visitor, "GET", f"/posts/{post_id}/votes", query={"limit": VOTERS_SHOWN})["items"]
            context["statuses"] = self._call(visitor, "GET", "/statuses")["items"]
            context["members"] = self._call(visitor, "GET", "/members")["items"]
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
                return self.sign_in_needed(visitor, "comment", f"/b/{visitor.slug}/p/{post_id}")
            raise
        return Redirect(f"/b/{visitor.slug}/p/{post_id}#c-{created['id']}")

    # ---- editing and deleting (the author within the API's window; the team deletes) ----------
    def post_edit_form(self, visitor: Visitor, post_id: str, error: str | None = None, form: dict | None = None,
                       status: int = 200) -> Page:
        post = self._call(visitor, "GET", f"/posts/{post_id}")
        if error is None and not (_within_window(post) or visitor.is_manager):
            return self._too_late(visitor, post, "edit-post")
        form = form or {"title": post["title"], "content": post["content"]}
        return Page("post_edit.html", {**self._common(visitor), "post": post, "form": form, "error": error,
                                       "until": post.get("editableUntil") if not visitor.is_manager else None}, status)

    def post_edit(self, visitor: Visitor, post_id: str, form: dict):
        self.check_csrf(visitor, form)
        payload = {"title": (form.get("title") or "").strip(), "content": form.get("content") or ""}
        try:
            self._call(visitor, "PATCH", f"/posts/{post_id}", payload=payload)
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "edit", f"/b/{visitor.slug}/p/{post_id}")
            if ex.status in (400, 403, 413):
                return self.post_edit_form(visitor, post_id, ex.message, form, ex.status)
            raise
        return Redirect(f"/b/{visitor.slug}/p/{post_id}?done=edited")

    def delete_confirm(self, visitor: Visitor, post_id: str, comment_id: str | None = None, error: str | None = None,
                       status: int = 200) -> Page:
        """The step before a deletion (no script needed): what goes, and a button that deletes it."""
        post = self._call(visitor, "GET", f"/posts/{post_id}")
        target = post
        if comment_id is not None:
            comments = self._call(visitor, "GET", f"/posts/{post_id}/comments", query={"limit": 500})["items"]
            target = next((c for c in comments if c["id"] == comment_id and not c.get("deleted")), None)
            if target is None:
                raise NotFound(_("This comment is not on this post any more."))
        if error is None and not (_within_window(target) or visitor.is_manager):
            return self._too_late(visitor, target, "delete-comment" if comment_id else "delete-post")
        action = f"/b/{visitor.slug}/p/{post_id}" + (f"/comments/{comment_id}" if comment_id else "") + "/delete"
        return Page("delete_confirm.html", {**self._common(visitor), "post": post, "comment": target if comment_id else None,
                                            "action": action, "error": error}, status)

    def delete(self, visitor: Visitor, post_id: str, form: dict, comment_id: str | None = None):
        self.check_csrf(visitor, form)
        path = f"/posts/{post_id}" + (f"/comments/{comment_id}" if comment_id else "")
        try:
            self._call(visitor, "DELETE", path)
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "delete", f"/b/{visitor.slug}/p/{post_id}")
            if ex.status in (403, 409):
                return self.delete_confirm(visitor, post_id, comment_id, ex.message, ex.status)
            raise
        if comment_id:
            return Redirect(f"/b/{visitor.slug}/p/{post_id}?done=comment-deleted#comments-h")
        return Redirect(f"/b/{visitor.slug}?done=deleted")

    def comment_edit_form(self, visitor: Visitor, post_id: str, comment_id: str, error: str | None = None,
                          form: dict | None = None, status: int = 200) -> Page:
        post = self._call(visitor, "GET", f"/posts/{post_id}")
        comments = self._call(visitor, "GET", f"/posts/{post_id}/comments", query={"limit": 500})["items"]
        found = next((c for c in comments if c["id"] == comment_id and not c.get("deleted")), None)
        if found is None:
            raise NotFound(_("This comment is not on this post any more."))
        if error is None and not _within_window(found):
            return self._too_late(visitor, found, "edit-comment")
        return Page("comment_edit.html", {**self._common(visitor), "post": post, "comment": found, "error": error,
                                          "form": form or {"content": found["content"]}}, status)

    def comment_edit(self, visitor: Visitor, post_id: str, comment_id: str, form: dict):
        self.check_csrf(visitor, form)
        try:
            self._call(visitor, "PATCH", f"/posts/{post_id}/comments/{comment_id}", payload={"content": (form.get("content") or "").strip()})
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "edit", f"/b/{visitor.slug}/p/{post_id}")
            if ex.status in (400, 403, 413):
                return self.comment_edit_form(visitor, post_id, comment_id, ex.message, form, ex.status)
            raise
        return Redirect(f"/b/{visitor.slug}/p/{post_id}?done=comment-edited#c-{comment_id}")

    def _too_late(self, visitor: Visitor, item: dict, what: str) -> Page:
        """A page (403) saying why the visitor cannot do ``what`` (edit-post, delete-post,
        edit-comment, delete-comment): ``item`` is not theirs, or their window to change it has
        closed. Each case is a whole sentence, for the translators."""
        mine, others = {
            "edit-post": (_("You can no longer edit this post: an author can change what they wrote for 15 minutes "
                            "after writing it."),
                          _("You cannot edit this post: only its author can, for 15 minutes after writing it (the "
                            "team can delete it).")),
            "delete-post": (_("You can no longer delete this post: an author can change what they wrote for 15 "
                              "minutes after writing it."),
                            _("You cannot delete this post: only its author can, for 15 minutes after writing it "
                              "(the team can delete it).")),
            "edit-comment": (_("You can no longer edit this comment: an author can change what they wrote for 15 "
                               "minutes after writing it."),
                             _("You cannot edit this comment: only its author can, for 15 minutes after writing it "
                               "(the team can delete it).")),
            "delete-comment": (_("You can no longer delete this comment: an author can change what they wrote for 15 "
                                 "minutes after writing it."),
                               _("You cannot delete this comment: only its author can, for 15 minutes after writing "
                                 "it (the team can delete it).")),
        }[what]
        message = mine if item.get("mine") else others
        return Page("error.html", {**self._common(visitor), "status": 403, "message": message}, 403)

    def _following(self, visitor: Visitor, post_id: str) -> bool | None:
        """Whether the signed-in visitor follows the post; None when nobody here can: an
        anonymous visitor, a caller without an address to mail (403: an SSO user without
        email), or a platform without the notifications plugin (404: the post was just read)."""
        if visitor.kind == "anonymous":
            return None
        try:
            return self._call(visitor, "GET", f"/posts/{post_id}/follow")["following"]
        except ApiError as ex:
            if ex.status in (401, 403, 404):
                return None
            raise

    def follow(self, visitor: Visitor, post_id: str, form: dict):
        self.check_csrf(visitor, form)
        following = check(form, schemas.FOLLOW)["following"] == "true"
        try:
            self._call(visitor, "PUT", f"/posts/{post_id}/follow", payload={"following": following})
        except ApiError as ex:
            if ex.status == 401:
                return self.sign_in_needed(visitor, "follow", f"/b/{visitor.slug}/p/{post_id}")
            raise
        return Redirect(f"/b/{visitor.slug}/p/{post_id}")

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
        return Page("changelog.html", {**common, "entries": entries, "titles": titles,
                                       **subscriptions.form_state(self, visitor, params)})

    # ---- submitting ------------------------------------------------------------------
    def new_post_form(self, visitor: Visitor, params: dict, error: str | None = None, form: dict | None = None,
                      first_board: dict | None = None, status: int = 200) -> Page:
        common = self._common(visitor)
        boards = self._call(visitor, "GET", "/boards")["items"]
        if not boards:  # nowhere to post yet: the team creates the first board, anyone else is told so
            return Page("new.html", {**common, "boards": [], "error": None, "form": {},
                                     "first_board": first_board or first_board_form("new")}, status)
        # ``?board=`` chooses the board (a link from a board's page, or the board just created);
        # an idea typed before signing in (DRAFT_COOKIE) fills the form again.
        restored = None if form else self._draft(visitor)
        form = form or restored or {"board": params.get("board") or ""}
        return Page("new.html", {**common, "boards": boards, "error": error, "form": form, "restored": bool(restored),
                                 "created": _named(boards, params.get("created")), "vote_words": shapes.vote_words()},
                    400 if error else 200)

    def create_board(self, visitor: Visitor, form: dict):
        """The team's first board (the form a workspace without one shows the team on the board
        and submit pages), through ``POST /boards``: then the page it was sent from, which now
        takes a post. A refusal shows that page again with the form as typed and the reason."""
        self.check_csrf(visitor, form)
        self._require_manager(visitor)
        then = check(form, schemas.NEW_BOARD).get("then") or "board"
        name = (form.get("name") or "").strip()
        typed = (form.get("slug") or "").strip()
        slug = typed or shapes.slug_of(name)
        values = {"name": name, "slug": typed}
        # A slug is made from the name only when none is typed; a name it cannot be made from is
        # the site's to say (the API would name the slug, which the visitor left empty).
        if not slug:
            refusal = ((_("Give the board a name."), "name") if not name else
                       (_("Give the board a slug: its name has no letter or digit (a to z, 0 to 9) to make one from."),
                        "slug"))
            return self._first_board_refused(visitor, first_board_form(then, values, *refusal), 400)
        try:
            board = self._call(visitor, "POST", "/boards", payload={"slug": slug, "name": name})
        except ApiError as ex:
            if ex.status in (400, 403, 409):
                field = shapes.refused_field(ex.status, ex.message, ("name", "slug"))
                return self._first_board_refused(visitor, first_board_form(then, values, ex.message, field), ex.status)
            raise
        query = urlencode({"board": board["slug"], "created": board["slug"]} if then == "new" else {"created": board["slug"]})
        return Redirect(f"/b/{visitor.slug}{'/new' if then == 'new' else ''}?{query}")

    def _first_board_refused(self, visitor: Visitor, first_board: dict, status: int) -> Page:
        page = self.new_post_form if first_board["then"] == "new" else self.board
        return page(visitor, {}, first_board=first_board, status=status)

    def submit(self, visitor: Visitor, form: dict):
        self.check_csrf(visitor, form)
        payload = {"boardSlug": form.get("board") or "", "title": (form.get("title") or "").strip(),
                   "content": form.get("content") or ""}
        try:
            created = self._call(visitor, "POST", "/posts", payload=payload)
        except ApiError as ex:
            if ex.status == 401:
                draft = {"board": payload["boardSlug"], "title": payload["title"], "content": payload["content"]}
                kept = self._keep_draft(visitor, draft)
                return self.sign_in_needed(visitor, "post", f"/b/{visitor.slug}/new", draft, kept)
            if ex.status in (400, 404, 409, 413):  # 409: a board archived since the form was shown
                return self.new_post_form(visitor, {}, ex.message, form)
            raise
        if visitor.draft:
            visitor.cookies.append((DRAFT_COOKIE, None, 0))  # posted: the draft is done with
        return Redirect(f"/b/{visitor.slug}/p/{created['id']}")

    def _keep_draft(self, visitor: Visitor, draft: dict) -> bool:
        """Keep ``draft`` in the browser (DRAFT_COOKIE) for DRAFT_SECONDS, signed and bound to
        this workspace; False when it is too long for a cookie."""
        packed = json.dumps({"s": visitor.slug, "e": int(time.time()) + DRAFT_SECONDS, **draft}, separators=(",", ":"))
        value = urlsafe_b64encode(zlib.compress(packed.encode(), 9)).decode().rstrip("=")
        value = f"{value}.{_sign(self.secret, 'draft:' + value)[:32]}"
        if len(value) > DRAFT_MAX:
            return False
        visitor.cookies.append((DRAFT_COOKIE, value, DRAFT_SECONDS))
        return True

    def _draft(self, visitor: Visitor) -> dict | None:
        """The draft this browser kept for this workspace, if its signature holds and it is fresh."""
        value, _unused, signature = (visitor.draft or "").rpartition(".")
        if not value or not hmac.compare_digest(signature, _sign(self.secret, "draft:" + value)[:32]):
            return None
        try:
            packed = json.loads(zlib.decompress(urlsafe_b64decode(value + "=" * (-len(value) % 4)), bufsize=4096))
        except (ValueError, zlib.error):
            return None
        if packed.get("s") != visitor.slug or packed.get("e", 0) < time.time():
            return None
        return {k: str(packed.get(k) or "") for k in ("board", "title", "content")}

    # ---- signing in --------------------------------------------------------------------
    # A GET never changes who is signed in: a sign-in link (SSO, email, invitation) only shows
    # what it would do, and a POST of that page's form (CSRF-checked) does it. A link or an
    # image in a comment cannot sign a viewer in as someone else. The one exception is the
    # OpenID Connect callback, a redirect target by nature: its ``state`` must be the one this
    # browser started (a cookie), so a callback URL sent by someone else signs nobody in.
    # Sign-in forms carry ``anon_csrf`` (bound to the anonymous cookie), whoever is signed in.
    def sso_confirm(self, visitor: Visitor, token: str) -> Page:
        account = self._check_user_token(visitor, token)
        return Page("sso.html", {**self._common(visitor), "token": token, "account": account,
                                 "csrf": visitor.anon_csrf})

    def sso(self, visitor: Visitor, form: dict) -> Redirect:
        """The SSO token is traded for a session of the people service once; the site keeps the
        session, never the token."""
        self.check_csrf(visitor, form, visitor.anon_csrf)
        token = form.get("token") or ""
        self._check_token_form(token)
        session = self._call_as(visitor, {"X-Feedback-User": token}, "POST", "/sessions")
        return self._start_session(visitor, session)

    def _check_token_form(self, token: str) -> None:
        if not token:
            raise BadRequest(_("the sign-in link has no token"))
        if not schemas.CREDENTIAL.fullmatch(token):
            raise BadRequest(_("the sign-in link's token is malformed"))

    def _check_user_token(self, visitor: Visitor, token: str) -> dict:
        self._check_token_form(token)
        self._call_as(visitor, {"X-Feedback-User": token}, "GET", "/posts", {"limit": 1})
        return shapes.account(token)

    def sign_in_form(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200) -> Page:
        """Every method the workspace has: the email form always (team members may use every
        method; an end user is told when the workspace does not offer it), OpenID Connect when
        configured, passkeys."""
        common = self._common(visitor)
        settings = self._call(visitor, "GET", "/sign-in-settings")
        next_path = self._local(visitor, params.get("next"), "")
        return Page("sign_in.html", {
            **common, "csrf": visitor.anon_csrf, "next": next_path, "error": error, "email": params.get("email") or "",
            "oidc": settings.get("oidc"), "end_user_methods": settings.get("endUserMethods") or [],
            "oidc_link": f"/b/{visitor.slug}/sign-in/oidc" + (("?" + urlencode({"next": next_path})) if next_path else ""),
        }, status)

    def sign_in_email(self, visitor: Visitor, form: dict) -> Page:
        self.check_csrf(visitor, form, visitor.anon_csrf)
        next_path = self._local(visitor, form.get("next"), "")
        payload = {"email": (form.get("email") or "").strip(), **self._origin(visitor), **({"next": next_path} if next_path else {}),
                   "locale": i18n.current().tag}  # the mail is in the language of this page
        try:
            self._call_anonymously(visitor, "POST", "/sign-in/email", payload)
        except ApiError as ex:
            if ex.status in (400, 429):
                return self.sign_in_form(visitor, {"next": next_path, "email": payload["email"]}, _sign_in_refusal(ex),
                                         ex.status)
            raise
        # The page says what the API's answer says (the same whoever the address is), in the page's words.
        return Page("sign_in_sent.html", {**self._common(visitor), "email": payload["email"]})

    def email_link(self, visitor: Visitor, params: dict) -> Page:
        token = params.get("token") or ""
        self._check_token_form(token)
        return Page("sign_in_email.html", {**self._common(visitor), "token": token, "csrf": visitor.anon_csrf,
                                           "next": self._local(visitor, params.get("next"), "")})

    def email_link_redeem(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form, visitor.anon_csrf)
        token = form.get("token") or ""
        self._check_token_form(token)
        session = self._call_anonymously(visitor, "POST", "/sign-in/email/redeem", {"token": token})
        return self._start_session(visitor, session, self._local(visitor, session.get("next"), ""))

    def oidc_start(self, visitor: Visitor, params: dict) -> Redirect:
        """A link, not a form: the site's CSP (``form-action 'self'``) would stop a form's
        redirect to the provider. Starting signs nobody in; the state it returns is kept in a
        cookie, so only this browser can finish it."""
        next_path = self._local(visitor, params.get("next"), "")
        answer = self._call_anonymously(visitor, "POST", "/sign-in/oidc",
                                        {**self._origin(visitor), **({"next": next_path} if next_path else {})})
        url = answer["authorizationUrl"]
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        if not state:
            raise BadRequest(_("the identity provider's address has no state"))
        visitor.cookies.append((OIDC_COOKIE, state, OIDC_SECONDS))
        return Redirect(url)

    def oidc_callback(self, visitor: Visitor, params: dict) -> Redirect:
        if params.get("error"):
            raise BadRequest(_("the identity provider did not sign you in: %(reason)s",
                               reason=params.get("error_description") or params["error"]))
        state, code = params.get("state") or "", params.get("code") or ""
        if not state or not code:
            raise BadRequest(_("the identity provider's answer has no state or code"))
        visitor.cookies.append((OIDC_COOKIE, None, 0))  # one use, whatever happens next
        if not visitor.oidc_state or not hmac.compare_digest(state, visitor.oidc_state):
            raise Forbidden(_("this sign-in was not started in this browser; start it again from the sign-in page"))
        session = self._call_anonymously(visitor, "POST", "/sign-in/oidc/callback", {"state": state, "code": code})
        return self._start_session(visitor, session, self._local(visitor, session.get("next"), ""))

    def passkey_options(self, visitor: Visitor, form: dict) -> Json:
        self.check_csrf(visitor, form, visitor.anon_csrf)
        return self._json(lambda: self._call_anonymously(visitor, "POST", "/sign-in/passkey/options", self._origin(visitor)))

    def passkey_sign_in(self, visitor: Visitor, form: dict) -> Json:
        self.check_csrf(visitor, form, visitor.anon_csrf)
        payload = self._ceremony(form)
        next_path = self._local(visitor, form.get("next"), "")

        def sign_in():
            session = self._call_anonymously(visitor, "POST", "/sign-in/passkey", payload)
            return {"location": self._start_session(visitor, session, next_path).location}

        return self._json(sign_in, 201)

    def join_page(self, visitor: Visitor, params: dict) -> Page:
        token = params.get("token") or ""
        self._check_token_form(token)
        return Page("join.html", {**self._common(visitor), "token": token, "csrf": visitor.anon_csrf})

    def join(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form, visitor.anon_csrf)
        token = form.get("token") or ""
        self._check_token_form(token)
        session = self._call_anonymously(visitor, "POST", "/invitations/accept", {"token": token})
        # A new member lands where the people service says (their board), as after a sign-in
        # link; an owner goes by the first-run setup, which leads on to the board once one exists.
        then = self._local(visitor, session.get("next"), f"/b/{visitor.slug}")
        if session.get("role") == "owner" and then == f"/b/{visitor.slug}":
            then = f"/b/{visitor.slug}/admin/setup"
        return self._start_session(visitor, session, then)

    def _origin(self, visitor: Visitor) -> dict:
        return {"origin": visitor.origin} if visitor.origin else {}

    @staticmethod
    def _ceremony(form: dict) -> dict:
        """A WebAuthn ceremony's result as site.js posts it: the challenge's id and the
        credential (JSON), checked by the people service."""
        try:
            credential = json.loads(form.get("credential") or "")
        except ValueError:
            credential = None
        if not isinstance(credential, dict) or not form.get("challengeId"):
            raise BadRequest(_("the passkey's answer is missing or malformed"))
        payload = {"challengeId": form["challengeId"], "credential": credential}
        if (form.get("name") or "").strip():
            payload["name"] = form["name"].strip()
        return payload

    @staticmethod
    def _json(work, status: int = 200) -> Json:
        """A script's answer: what ``work`` returns, or the API's refusal as ``{"error"}``."""
        try:
            return Json(work(), status)
        except ApiError as ex:
            return Json({"error": ex.message, "code": ex.code}, ex.status if 400 <= ex.status < 600 else 502)

    def _start_session(self, visitor: Visitor, session: dict, then: str | None = None) -> Redirect:
        """Keep the people service's new session in the cookie; a sign-in always ends the
        session the browser had (a new token every time)."""
        self._end_session(visitor)
        max_age = _seconds_until(session.get("expiresAt"), schemas.COOKIE_MAX_SECONDS)
        visitor.cookies.append((SESSION_COOKIE, session["token"], max_age))
        return Redirect(then or f"/b/{visitor.slug}")

    def _end_session(self, visitor: Visitor) -> None:
        if not visitor.token:
            return
        # Best effort: a visitor who signs out is signed out here (the cookie goes) whatever
        # the API answers; the session expires there anyway.
        try:
            self.api.call("POST", "/me/sign-out", visitor.identity)
        except ApiError as ex:
            log.warning("could not end a session at sign-out: %s %s", ex.status, ex.message)

    def sign_out(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form)
        self._end_session(visitor)
        visitor.cookies.append((SESSION_COOKIE, None, 0))
        return Redirect(f"/b/{visitor.slug}")

    def manager_sign_in(self, visitor: Visitor) -> Redirect:
        """The old team sign-in address (an API key form, gone: keys are for machines)."""
        return Redirect(self._sign_in_path(visitor, f"/b/{visitor.slug}/admin/queue"))

    def _sign_in_path(self, visitor: Visitor, then: str) -> str:
        return f"/b/{visitor.slug}/sign-in?" + urlencode({"next": then})

    # ---- the signed-in person's account -----------------------------------------------------
    def account(self, visitor: Visitor, params: dict):
        if visitor.kind == "anonymous":
            return Redirect(self._sign_in_path(visitor, f"/b/{visitor.slug}/account"))
        common = self._common(visitor)
        try:
            passkeys = self._call(visitor, "GET", "/passkeys")["items"]
        except ApiError as ex:
            if ex.status not in (403, 404):  # a person without passkeys on this platform (an SSO user)
                raise
            passkeys = None
        return Page("account.html", {**common, "passkeys": passkeys, "saved": params.get("saved") == "1"})

    def account_update(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        changes = account_changes(visitor.me, form)
        if changes:
            self.api.call("PATCH", "/me", visitor.identity, payload=changes)
        if "locale" in changes:
            # The person's own choice from now on: a language this browser was given by a link
            # (the fb_lang cookie) would otherwise stay in force under "Browser default".
            visitor.cookies.append((LANGUAGE_COOKIE, None, 0))
        return Redirect(f"/b/{visitor.slug}/account?saved=1")

    def passkey_registration_options(self, visitor: Visitor, form: dict) -> Json:
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        return self._json(lambda: self._call(visitor, "POST", "/passkeys/registration-options", payload=self._origin(visitor)))

    def passkey_register(self, visitor: Visitor, form: dict) -> Json:
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        payload = self._ceremony(form)

        def register():
            passkey = self._call(visitor, "POST", "/passkeys", payload=payload)
            return {**passkey, "location": f"/b/{visitor.slug}/account"}

        return self._json(register, 201)

    def passkey_remove(self, visitor: Visitor, passkey_id: str, form: dict) -> Redirect:
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        self._call(visitor, "DELETE", f"/passkeys/{passkey_id}")
        return Redirect(f"/b/{visitor.slug}/account")

    def sign_out_everywhere(self, visitor: Visitor, form: dict) -> Redirect:
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        self.api.call("POST", "/me/sign-out-everywhere", visitor.identity)
        visitor.cookies.append((SESSION_COOKIE, None, 0))
        return Redirect(f"/b/{visitor.slug}")

    # ---- a person's data: download it, erase them (docs/privacy.md) ---------------------------
    def my_data(self, visitor: Visitor):
        if visitor.kind == "anonymous":
            return Redirect(self._sign_in_path(visitor, f"/b/{visitor.slug}/account"))
        return Json(self.api.call("GET", "/me/data", visitor.identity), filename=f"my-data-{visitor.slug}.json")

    def erase_me(self, visitor: Visitor, form: dict):
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        if form.get("confirm") != "erase":
            raise BadRequest(_("tick the box to confirm that your account and data should be erased"))
        common = self._common(visitor)
        answer = self.api.call("DELETE", "/me/data", visitor.identity)
        visitor.cookies.append((SESSION_COOKIE, None, 0))
        # The page is shown to nobody in particular: the person it was for is gone.
        return Page("account_erased.html", {**common, "visitor": self.anonymous(visitor.slug, {}),
                                            "everywhere": answer.get("workspace") is None})

    # ---- notifications: preferences and a mail's unsubscribe link ---------------------------
    def notifications(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200):
        if visitor.kind == "anonymous":
            return Redirect(self._sign_in_path(visitor, f"/b/{visitor.slug}/account/notifications"))
        common = self._common(visitor)
        preferences = self._call(visitor, "GET", "/me/notifications")
        return Page("notifications.html", {**common, "preferences": preferences, "choices": schemas.NOTIFICATION_CHOICES,
                                           "paces": schemas.TEAM_ACTIVITY, "saved": params.get("saved") == "1",
                                           "error": error}, status)

    def notifications_update(self, visitor: Visitor, form: dict):
        self.check_csrf(visitor, form)
        self._require_person(visitor)
        action = check(form, schemas.NOTIFICATIONS)["action"]
        if action == "save":
            # A checkbox left unticked is not in the form at all: every choice is sent, as off.
            changes = {choice: bool(form.get(choice)) for choice in schemas.NOTIFICATION_CHOICES}
            if form.get("teamActivity"):  # offered to team members only
                changes["teamActivity"] = form["teamActivity"]
        else:
            changes = {"unsubscribed": action == "unsubscribe"}
        try:
            self._call(visitor, "PATCH", "/me/notifications", payload=changes)
        except ApiError as ex:
            if ex.status == 400:
                return self.notifications(visitor, {}, _("These preferences could not be saved: %(reason)s",
                                                         reason=ex.message), 400)
            raise
        return Redirect(f"/b/{visitor.slug}/account/notifications?saved=1")

    def unsubscribe_page(self, visitor: Visitor, params: dict) -> Page:
        """A mail's unsubscribe link, opened: a page with one button. A GET changes nothing,
        since mail scanners and link previews open every link of a message."""
        token = params.get("token") or ""
        common = self._common(visitor)
        if not schemas.UNSUBSCRIBE_TOKEN.fullmatch(token):
            return Page("unsubscribe.html", {**common, "token": "", "error": _(INVALID_UNSUBSCRIBE)}, 400)
        return Page("unsubscribe.html", {**common, "token": token, "error": None})

    def unsubscribe(self, visitor: Visitor, params: dict) -> Page:
        """Stop every notification of this workspace to the person the link's token names.

        No CSRF proof is asked, on purpose: RFC 8058's one-click unsubscribe is a POST by the
        recipient's mail provider, with neither the visitor's cookies nor a form of this site.
        The token is the authority: the platform signed it for one person and this workspace,
        it only ever unsubscribes (the worst a forged cross-site POST could do, and only with a
        token only the mail's recipient has), and the call is made as nobody, whoever is signed
        in here."""
        token = params.get("token") or ""
        common = self._common(visitor)
        if not schemas.UNSUBSCRIBE_TOKEN.fullmatch(token):
            return Page("unsubscribe.html", {**common, "token": "", "error": _(INVALID_UNSUBSCRIBE)}, 400)
        try:
            self._call_anonymously(visitor, "POST", "/notifications/unsubscribe", {"token": token})
        except ApiError as ex:
            if ex.status == 400:
                return Page("unsubscribe.html", {**common, "token": "", "error": _(INVALID_UNSUBSCRIBE)}, 400)
            raise
        return Page("unsubscribed.html", common)

    def _require_person(self, visitor: Visitor) -> None:
        if visitor.kind == "anonymous":
            raise Forbidden(_("sign in first"))

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
        elif action == "fields":
            settings = self._call(visitor, "GET", "/triage")
            self._call(visitor, "PATCH", f"/posts/{post_id}", payload=triage_changes(settings, form))
        else:  # unmerge
            self._call(visitor, "POST", f"/posts/{post_id}/unmerge")
        return Redirect(self._local(visitor, form.get("next"), f"/b/{visitor.slug}/p/{post_id}"))

    # ---- files the same for every visitor ------------------------------------------------
    def theme_css(self, visitor: Visitor) -> Asset:
        """The workspace's colours: its primary colour and its tags' (public, read as nobody).
        Tags that cannot be read leave the chips in the site's neutral style."""
        branding = self.branding(visitor)
        try:
            tags = self._call(visitor, "GET", "/triage")["tags"]
        except ApiError as ex:
            if ex.status not in (401, 403, 404):
                raise
            tags = []
        return shapes.theme_css(branding, tags)

    def static_file(self, visitor: Visitor, name: str) -> Asset:
        """One of the site's own files; ``visitor`` is not read (the file is everyone's)."""
        if name not in STATIC_FILES:
            raise NotFound(_("There is no file %(name)s here.", name=name))
        return Asset((files("web") / "static" / name).read_bytes(), STATIC_FILES[name], STATIC_MAX_AGE)


def _sign_in_refusal(ex: ApiError) -> str:
    """Why no sign-in link was sent, in the page's words: too many asked, or an address no link
    can go to; another refusal (a misconfigured origin) as the API says it."""
    if ex.status == 429:
        return _("Too many sign-in links were asked for this address; wait a few minutes, then ask again.")
    if "email" in ex.message.lower():
        return _("This is not an email address a sign-in link can be sent to: check it and try again.")
    return ex.message


def account_changes(me: dict, form: dict) -> dict:
    """The ``PATCH /v1/me`` of the account form: the name when it changed (a person signed in by
    SSO may not change it, and may still save their language), the language when it changed
    (empty: none, their browser's)."""
    changes: dict = {}
    if "name" in form and (form.get("name") or "").strip() != (me.get("name") or ""):
        changes["name"] = (form.get("name") or "").strip()
    if "locale" in form:
        locale = form.get("locale") or None
        if locale is not None and locale not in i18n.LOCALES:
            raise BadRequest(_("choose one of the languages the form offers"))
        if locale != me.get("locale"):
            changes["locale"] = locale
    return changes


def first_board_form(then: str, values: dict | None = None, error: str | None = None, invalid: str | None = None) -> dict:
    """The first board's form as a template shows it: the page it is on (``then``), the values
    typed, a refusal's reason and the field it is about (marked ``aria-invalid``)."""
    return {"then": then, "name": "", "slug": "", **(values or {}), "error": error, "invalid": invalid}


def _named(boards: list[dict], slug: str | None) -> dict | None:
    """The board of ``slug`` among ``boards`` (a page says "just created" only of a real board)."""
    return next((b for b in boards if slug and b["slug"] == slug), None)


def triage_changes(settings: dict, form: dict) -> dict:
    """The ``PATCH`` of a post's status, moderation state, owner, ETA, tags and custom fields
    from the triage panel's one form (``action=fields``; ``settings``: ``GET /triage``, as the
    team reads it).

    An empty input clears its value (null), an unticked tag is removed, an unticked checkbox
    field is false (as on the preferences page) and a multiselect with no box ticked is cleared.
    Only the fields the form showed (``fieldKeys``) are sent, and the owner only when it was
    changed (``ownerWas``: a former member kept as owner is not refused on every save). A number
    that does not read as one is sent as typed, so the API's message names the field."""
    changes: dict = {
        # The status and moderation state only when changed (``statusWas``): a status change
        # tells the post's followers, a save of tags alone must not.
        **{name: value for name, was in (("statusSlug", "statusWas"), ("moderationState", "moderationStateWas"))
           if (value := (form.get(name) or "").strip()) and value != (form.get(was) or "").strip()},
        "eta": (form.get("eta") or "").strip() or None,
        "tags": [t["slug"] for t in settings.get("tags", []) if form.get(schemas.TAG_PREFIX + t["slug"])],
    }
    owner = (form.get("owner") or "").strip() or None
    if owner != ((form.get("ownerWas") or "").strip() or None):
        changes["owner"] = owner
    shown = {k for k in (form.get("fieldKeys") or "").split(",") if schemas.TRIAGE_KEY.fullmatch(k)}
    values = {}
    for spec in settings.get("fields", []):
        key = spec["key"]
        if key not in shown:
            continue
        name = schemas.FIELD_PREFIX + key
        if spec["type"] == "checkbox":
            values[key] = bool(form.get(name))
        elif spec["type"] == "multiselect":
            ticked = {value for n, value in form.items() if n.startswith(name + ".")}
            values[key] = [o for o in spec.get("options", []) if o in ticked] or None
        elif spec["type"] == "number":
            values[key] = _number((form.get(name) or "").strip())
        else:  # text, select, date
            values[key] = (form.get(name) or "").strip() or None
    if values:
        changes["fields"] = values
    return changes


def _number(text: str):
    """A number field's input as JSON would say it: empty is None, ``3`` an integer, ``2.5`` a
    float; anything else (and a non-finite value) as typed, for the API to refuse."""
    if not text:
        return None
    if re.fullmatch(r"[+-]?[0-9]{1,15}", text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text
