"""The people service's settings, read once from the environment (see docs/services/people.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import Settings, as_bool, as_list, from_env, load, positive


@dataclass(frozen=True)
class PeopleConfig:
    # A session ends after this long without a request (idle), and this long after sign-in
    # whatever happens (absolute). Seconds.
    session_idle_seconds: int = from_env("PEOPLE_SESSION_IDLE_SECONDS", 14 * 24 * 3600, positive(int))
    session_max_seconds: int = from_env("PEOPLE_SESSION_MAX_SECONDS", 30 * 24 * 3600, positive(int))
    # A sign-in link works once, for this long; an invitation link once, for this long.
    link_seconds: int = from_env("PEOPLE_LINK_SECONDS", 15 * 60, positive(int))
    invitation_seconds: int = from_env("PEOPLE_INVITATION_SECONDS", 7 * 24 * 3600, positive(int))
    # Sign-in links one address may be sent per window (the gateway limits each client too).
    # Counted per workspace: asking on other workspaces never locks an address out of its own.
    links_per_address: int = from_env("PEOPLE_LINKS_PER_ADDRESS", 5, positive(int))
    links_window_seconds: int = from_env("PEOPLE_LINKS_WINDOW_SECONDS", 15 * 60, positive(int))
    # Sign-in mails per window to an address from workspaces it never signed in to, all such
    # workspaces together: a stranger's board cannot turn the platform into a mail cannon.
    links_per_stranger_address: int = from_env("PEOPLE_LINKS_PER_STRANGER_ADDRESS", 5, positive(int))
    # Invitations a workspace's team may send per hour (the operator's are not counted).
    invitations_per_hour: int = from_env("PEOPLE_INVITATIONS_PER_HOUR", 30, positive(int))
    # The platform's public address: links in mail, and the origin passkeys and OpenID Connect
    # redirects are bound to (besides a workspace's verified custom domain).
    public_base_url: str = "http://127.0.0.1:8080"
    # Whether an OpenID Connect issuer (and its endpoints) may be plain http: only in
    # development (the default there) or against a provider on a trusted network.
    oidc_allow_http: bool = from_env("PEOPLE_OIDC_ALLOW_HTTP", False, as_bool)
    # The provider is fetched through the platform's outbound-fetch guard (common.outbound):
    # host names, addresses or CIDRs it may reach although they are not public (a provider on
    # the platform's own network, or loopback in tests). Default: nothing internal.
    oidc_allowed_hosts: tuple[str, ...] = from_env("PEOPLE_OIDC_ALLOWED_HOSTS", (), as_list)
    # Seconds for each exchange with the provider (discovery, keys, token), redirects included:
    # a wall-clock deadline, not a read timeout.
    oidc_timeout_seconds: float = from_env("PEOPLE_OIDC_TIMEOUT_SECONDS", 5.0, positive(float))
    # Exchanges with providers in flight per process: for one workspace, and for all together.
    # Beyond them a sign-in is answered 503 at once, so a hostile provider holds at most this
    # many of the threads that also check every authenticated request's credential.
    oidc_concurrency_per_workspace: int = from_env("PEOPLE_OIDC_CONCURRENCY_PER_WORKSPACE", 2, positive(int))
    oidc_concurrency: int = from_env("PEOPLE_OIDC_CONCURRENCY", 4, positive(int))


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> PeopleConfig:
    return load(PeopleConfig, environ, public_base_url=settings.public_base_url, oidc_allow_http=settings.dev_mode)
