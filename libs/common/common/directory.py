"""Asking the service that owns something: the one way a service learns what another owns.

A service never reads another's database. What it must know now (read-your-writes: a board
added a moment ago, the persons behind some votes) it asks the owner over signed internal HTTP
(``common.internal``); what may lag it learns from events. Every such question goes through
:class:`Owner`, which holds in one place what each used to spell its own way: whether the
deployment runs the owner at all, the call, the answers that count, the error when it cannot
answer (``Unavailable``: a 503 to the caller, a retry to a consumer) and, for answers that may
be a little old, a cache. The questions themselves are grouped by owner below: :class:`People`,
:class:`Workspaces`, :class:`Posts` (docs/architecture.md, "Asking the owner").
"""

from __future__ import annotations

from typing import Callable
from urllib.parse import quote

from cachetools import TTLCache, cachedmethod

from common import auth
from common.errors import BadRequest, NotFound, Unavailable
from common.internal import InternalClient


class Owner:
    """The service ``name`` that owns some data, as ``client`` reaches it."""

    def __init__(self, client: InternalClient, name: str):
        self.client, self.name = client, name

    def here(self) -> bool:
        """Whether this deployment runs the owner."""
        return bool(self.client.settings.service_url(self.name))

    def ask(self, method: str, path: str, payload: dict | None = None, *, what: str, caller: auth.Caller | None = None,
            params: dict | None = None, refusals: dict[int, Callable[[object], Exception]] | None = None) -> dict:
        """The owner's answer (a JSON object) to one request. ``refusals`` maps a status the
        owner may rightly answer (404, 400) to the error it means here; any other answer but
        200, and an owner this deployment does not run, is ``Unavailable``, worded with
        ``what`` ("look persons up")."""
        if not self.here():
            raise Unavailable(f"cannot {what}: no {self.name} service in this deployment")
        status, body = self.client.json(self.name, method, path, payload, params=params, caller=caller)
        if refusals and status in refusals:
            raise refusals[status](body)
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot {what} now: the {self.name} service answered {status}")
        return body


class Questions:
    """The questions this deployment asks one owner (the classes below)."""

    OWNER = ""

    def __init__(self, client: InternalClient):
        self.owner = Owner(client, self.OWNER)

    def here(self) -> bool:
        """Whether this deployment runs the owner (in-process tests run none)."""
        return self.owner.here()


def _error_of(body: object, default: str) -> str:
    return body["error"] if isinstance(body, dict) and isinstance(body.get("error"), str) else default


class People(Questions):
    """Who persons and team members are: the people service owns addresses (docs/services/people.md, "Internal")."""

    OWNER = "people"
    LOOKUP_BATCH = 1000  # persons the people service looks up at once (its maximum)

    def user_of(self, email: str) -> str:
        """The user id (``person:<id>``) of the person of ``email``, made if nobody signed in
        with it yet; 400 for what is not an address."""
        body = self.owner.ask("POST", "/internal/people/resolve", {"email": email}, what="look the address up",
                              refusals={400: lambda b: BadRequest(_error_of(b, "field 'email' is not an email address"))})
        return f"{auth.PERSON_PREFIX}{body['id']}"

    def persons(self, user_ids: list[str]) -> dict[str, dict]:
        """``{person:<id>: {id, email, name}}`` of the persons among ``user_ids`` who exist."""
        raw = sorted({u[len(auth.PERSON_PREFIX):] for u in user_ids if u.startswith(auth.PERSON_PREFIX)})
        found: dict[str, dict] = {}
        for start in range(0, len(raw), self.LOOKUP_BATCH):
            body = self.owner.ask("POST", "/internal/people/lookup", {"ids": raw[start:start + self.LOOKUP_BATCH]},
                                  what="look persons up")
            found.update({f"{auth.PERSON_PREFIX}{p['id']}": p for p in body["items"]})
        return found

    def team(self, slug: str) -> list[dict]:
        """The members of ``slug``'s team: ``{id: person:<id>, email, name, role}`` each."""
        body = self.owner.ask("GET", f"/internal/workspaces/{quote(slug)}/team", what=f"read the team of '{slug}'")
        return [{**m, "id": f"{auth.PERSON_PREFIX}{m['id']}"} for m in body["items"]]


class Workspaces(Questions):
    """Whether a workspace exists and what it shares (name, boards, statuses, branding: no
    secrets): the workspaces service owns them. Only the operator's requests need asking
    whether a workspace exists (a manager's key belongs to its workspace: the gateway checked),
    and the answer cannot change (workspaces are never deleted), so it is remembered."""

    OWNER = "workspaces"
    BRANDING_SECONDS = 60  # a renamed or recoloured workspace shows in mail within a minute

    def __init__(self, client: InternalClient):
        super().__init__(client)
        self._known: set[str] = set()
        self._brandings: TTLCache = TTLCache(maxsize=10_000, ttl=self.BRANDING_SECONDS)

    def require_manager(self, caller: auth.Caller, slug: str) -> None:
        """401/403 unless a manager of ``slug`` (or the operator); 404 for an unknown workspace."""
        auth.require_manager(caller, slug)
        if caller.kind == auth.ADMIN:
            self.require(slug)

    def require(self, slug: str) -> None:
        """Raise NotFound for an unknown workspace."""
        if slug not in self._known:
            self.snapshot(slug)

    def snapshot(self, slug: str) -> dict:
        """What the workspaces service shares of ``slug``; NotFound for an unknown workspace."""
        body = self.owner.ask("GET", f"/internal/workspaces/{quote(slug)}/snapshot", what=f"check workspace '{slug}'",
                              refusals={404: lambda _: NotFound(f"workspace '{slug}' not found")})
        self._known.add(slug)
        return body

    def name(self, slug: str) -> str:
        return self.snapshot(slug)["name"]

    @cachedmethod(lambda self: self._brandings)
    def branding(self, slug: str) -> dict:
        """The workspace's public branding (``GET /v1/workspaces/{slug}/branding``), at most
        ``BRANDING_SECONDS`` old."""
        return self.owner.ask("GET", f"/v1/workspaces/{quote(slug)}/branding", what=f"read the branding of '{slug}'")


class Posts(Questions):
    """Which posts exist, who votes for them and what a caller may see: the posts service decides."""

    OWNER = "posts"

    def unknown(self, slug: str, ids: list[str]) -> list[str]:
        """The ids among ``ids`` that name no post of workspace ``slug`` (none where this
        deployment runs no posts service: nothing to check against)."""
        if not self.here():
            return []
        body = self.owner.ask("POST", "/internal/posts/lookup", {"workspace": slug, "ids": ids}, what="check postIds")
        found = set(body.get("found", []))
        return [i for i in ids if i not in found]

    def in_use(self, slug: str, *, board_id: str | None = None, status: str | None = None) -> bool:
        """Whether any post of ``slug`` (merged and unapproved ones too) is on the board
        ``board_id`` or in the status ``status`` (False where this deployment runs no posts
        service: no post to keep)."""
        if not self.here():
            return False
        question = {"boardId": board_id} if board_id is not None else {"status": status}
        body = self.owner.ask("POST", "/internal/posts/in-use", {"workspace": slug, **question},
                              what="check whether posts use it")
        return bool(body.get("inUse"))

    def voters(self, slug: str, post_ids: list[str]) -> list[dict]:
        """Each of ``post_ids`` that is a post of ``slug``: ``{id, title, listed, voters}`` (the
        persons whose votes count for it), as the posts service knows them now."""
        body = self.owner.ask("POST", "/internal/posts/voters", {"workspace": slug, "ids": post_ids},
                              what=f"read the voters of '{slug}'")
        return body["items"]

    def visible(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """The post as ``caller`` may see it; NotFound when they may not."""
        gone = lambda _: NotFound(f"post '{post_id}' not found")  # noqa: E731
        return self.owner.ask("GET", f"/v1/workspaces/{quote(slug)}/posts/{quote(post_id)}", caller=caller,
                              what=f"check post '{post_id}'", refusals={404: gone, 400: gone})
