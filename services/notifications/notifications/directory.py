"""What this service asks other services, over signed internal HTTP: who persons and team
members are (the people service owns addresses), what a workspace's board looks like and where
it lives (the workspaces service), and whether a caller may see a post (the posts service decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from cachetools import TTLCache, cachedmethod

from common import auth
from common.errors import NotFound, Unavailable
from common.internal import InternalClient
from common.mail import DEFAULT_ACCENT, Branding
from common.person_directory import PersonDirectory

WORKSPACES, POSTS = "workspaces", "posts"


@dataclass(frozen=True)
class Board:
    """A workspace's board as mail shows it: its branding and the address of its pages."""

    slug: str
    branding: Branding
    url: str  # the board's root, without a trailing slash: its verified domain or /b/<slug> on the platform

    def page(self, path: str) -> str:
        return self.url + path


class Directory:
    def __init__(self, client: InternalClient, public_base_url: str):
        self.client = client
        self.people = PersonDirectory(client)
        self.public_base_url = public_base_url.rstrip("/")
        self._boards: TTLCache = TTLCache(maxsize=10_000, ttl=60)  # a renamed workspace shows within a minute

    def _ask(self, service: str, method: str, path: str, payload: dict | None = None, caller=None) -> tuple[int, object]:
        if not self.client.settings.service_url(service):
            raise Unavailable(f"no {service} service in this deployment")
        return self.client.json(service, method, path, payload, caller=caller)

    def persons(self, ids: list[str]) -> dict[str, dict]:
        """``{person:<id>: {email, name}}`` of the persons among ``ids`` who exist."""
        return self.people.persons(ids)

    def team(self, slug: str) -> list[dict]:
        """The members of ``slug``'s team: ``{id: person:<id>, email, name, role}`` each."""
        return self.people.team(slug)

    @cachedmethod(lambda self: self._boards)
    def board(self, slug: str) -> Board:
        status, body = self._ask(WORKSPACES, "GET", f"/v1/workspaces/{quote(slug)}/branding")
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot read the branding of '{slug}' now: the workspaces service answered {status}")
        domain = body.get("customDomain")
        url = f"https://{domain}" if domain else f"{self.public_base_url}/b/{quote(slug)}"
        workspace = body["workspace"]
        return Board(slug=slug, url=url, branding=Branding(name=workspace["name"], accent=body.get("primaryColor") or DEFAULT_ACCENT,
                                                           logo_url=workspace.get("logo")))

    def shipped(self, slug: str, post_ids: list[str]) -> list[dict]:
        """Each of ``post_ids`` that is a post of ``slug``: ``{id, title, listed, voters}`` (the
        persons whose votes count for it), as the posts service knows them now."""
        status, body = self._ask(POSTS, "POST", "/internal/posts/voters", {"workspace": slug, "ids": post_ids})
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot read the voters of '{slug}' now: the posts service answered {status}")
        return body["items"]

    def visible_post(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """The post as ``caller`` may see it; NotFound when they may not (the posts service decides)."""
        status, body = self._ask(POSTS, "GET", f"/v1/workspaces/{quote(slug)}/posts/{quote(post_id)}", caller=caller)
        if status == 404 or status == 400:
            raise NotFound(f"post '{post_id}' not found")
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot check post '{post_id}' now: the posts service answered {status}")
        return body
