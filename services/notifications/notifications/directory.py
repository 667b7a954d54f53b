"""What this service asks the services that own it (``common.directory``): who persons and team
members are (people), what a workspace's board looks like and where it lives (workspaces), and
which posts shipped to whom and whether a caller may see a post (posts)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from common.directory import People, Posts, Workspaces
from common.internal import InternalClient
from common.mail import DEFAULT_ACCENT, Branding


@dataclass(frozen=True)
class Board:
    """A workspace's board as mail shows it: its branding and the address of its pages."""

    slug: str
    branding: Branding
    url: str  # the board's root, without a trailing slash: its verified domain or /b/<slug> on the platform

    def page(self, path: str) -> str:
        return self.url + path


class Directory:
    """The owners this service asks (``people``, ``workspaces``, ``posts``), and a board as mail shows it."""

    def __init__(self, client: InternalClient, public_base_url: str):
        self.people, self.workspaces, self.posts = People(client), Workspaces(client), Posts(client)
        self.public_base_url = public_base_url.rstrip("/")

    def board(self, slug: str) -> Board:
        body = self.workspaces.branding(slug)
        domain = body.get("customDomain")
        url = f"https://{domain}" if domain else f"{self.public_base_url}/b/{quote(slug)}"
        workspace = body["workspace"]
        return Board(slug=slug, url=url, branding=Branding(name=workspace["name"], accent=body.get("primaryColor") or DEFAULT_ACCENT,
                                                           logo_url=workspace.get("logo")))
