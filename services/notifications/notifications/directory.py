"""What this service asks the services that own it (``common.directory``): who persons and team
members are (people), what a workspace's board looks like and where it lives (workspaces), and
which posts shipped to whom and whether a caller may see a post (posts)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from common import i18n
from common.directory import People, Posts, Workspaces
from common.internal import InternalClient
from common.mail import DEFAULT_ACCENT, Branding


@dataclass(frozen=True)
class Board:
    """A workspace's board as mail shows it: its branding, the address of its pages and its
    languages."""

    slug: str
    branding: Branding
    url: str  # the board's root, without a trailing slash: its verified domain or /b/<slug> on the platform
    default_locale: str = i18n.DEFAULT  # the workspace's defaultLocale
    locales: tuple[str, ...] = ()  # the languages the workspace enabled (none named: every one)

    def page(self, path: str) -> str:
        return self.url + path

    def locale(self, chosen: str | None) -> str:
        """The language of a mail to someone who chose ``chosen`` (None: nobody chose): their
        choice where the workspace enabled it, else the workspace's default."""
        return i18n.choose(chosen=chosen, enabled=self.locales, default=self.default_locale)


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
                                                           logo_url=workspace.get("logo")),
                     default_locale=body.get("defaultLocale") or i18n.DEFAULT, locales=tuple(body.get("locales") or ()))
