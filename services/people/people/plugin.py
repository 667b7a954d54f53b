"""The people plugin: persons, team members, sessions, sign-in, the audit log.

It declares the platform's ``identity_path``: the gateway asks it who every credential belongs
to (sessions are its own; API keys and SSO tokens it asks the workspaces service about).
Declarative: the gateway and ``feedback init`` read this spec without importing the service's
code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl
from people import contract

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    from common.mail import MailQueue

    from people.config import PeopleConfig
    from people.oidc import OidcSignIn
    from people.passkeys import Passkeys
    from people.privacy import PersonalData
    from people.service import PeopleService

R = "people.resources:"
W = "/workspaces/{slug}"
WRITE = {"POST": "write"}
ROUTES = [
    Route("/me", R + "Me", ("GET", "PATCH")),
    Route("/me/sign-out", R + "SignOut", ("POST",)),
    Route("/me/sign-out-everywhere", R + "SignOutEverywhere", ("POST",)),
    # A person's data: download it, or erase them (people.privacy, docs/privacy.md).
    Route("/me/data", R + "MyData", ("GET", "DELETE")),
    Route(W + "/users/{userId}/data", R + "UserData", ("GET", "DELETE")),
    # The caller as one workspace knows them: an end user's token is checked against the
    # workspace a request is for, so it has no answer at /me (the widget asks here).
    Route(W + "/me", R + "WorkspaceMe", ("GET",)),
    Route(W + "/sessions", R + "Sessions", ("POST",), limits=WRITE),
    Route(W + "/sign-in/email", R + "EmailLink", ("POST",), limits=WRITE),
    Route(W + "/sign-in/email/redeem", R + "EmailLinkRedeem", ("POST",), limits=WRITE),
    Route(W + "/sign-in-settings", R + "SignInSettings", ("GET", "PATCH")),
    Route(W + "/members", R + "Members", ("GET", "POST"), limits=WRITE),
    Route(W + "/members/{personId}", R + "Member", ("PATCH", "DELETE")),
    Route(W + "/invitations", R + "Invitations", ("GET",)),
    Route(W + "/invitations/accept", R + "InvitationAccept", ("POST",), limits=WRITE),
    Route(W + "/invitations/{invitationId}", R + "Invitation", ("DELETE",)),
    Route(W + "/audit-log", R + "AuditLog", ("GET",)),
]
# Passkeys (people.passkeys): registered by a signed-in person, then enough alone to sign in.
ROUTES += [
    Route(W + "/passkeys/registration-options", R + "PasskeyRegistrationOptions", ("POST",), limits=WRITE),
    Route(W + "/passkeys", R + "Passkeys", ("GET", "POST"), limits=WRITE),
    Route(W + "/passkeys/{passkeyId}", R + "Passkey", ("DELETE",)),
    Route(W + "/sign-in/passkey/options", R + "PasskeySignInOptions", ("POST",), limits=WRITE),
    Route(W + "/sign-in/passkey", R + "PasskeySignIn", ("POST",), limits=WRITE),
]

# OpenID Connect (people.oidc).
ROUTES += [
    Route(W + "/oidc", R + "OidcProvider", ("GET", "PUT", "DELETE")),
    Route(W + "/sign-in/oidc", R + "OidcStart", ("POST",), limits=WRITE),
    Route(W + "/sign-in/oidc/callback", R + "OidcCallback", ("POST",), limits=WRITE),
]

IDENTITY_PATH = "/internal/identity"
INTERNAL_ROUTES = [
    Route(IDENTITY_PATH, R + "Identity", ("POST",)),
    # Whom another service may mail (the notifications service): persons by id, a team.
    Route("/internal/people/lookup", R + "PeopleLookup", ("POST",)),
    Route("/internal/workspaces/{slug}/team", R + "TeamDirectory", ("GET",)),
    # The person of an address, made if none exists yet (a company's member named by email).
    Route("/internal/people/resolve", R + "PeopleResolve", ("POST",)),
    # A page of a workspace's people for its export (portability).
    Route("/internal/people/export", R + "PeopleExport", ("POST",)),
    # The people an import brings, by address (portability): no mail.
    Route("/internal/people/import", R + "PeopleImport", ("POST",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: PeopleConfig
    service: PeopleService
    mail_queue: MailQueue  # the mailer worker sends it
    passkeys: Passkeys
    oidc: OidcSignIn  # sign-in with the workspace's OpenID Connect provider
    privacy: PersonalData  # a person's data: download and erasure


def create_context(settings: Settings) -> Context:
    from cachetools import TTLCache, cached

    from common.db import Store
    from common.internal import InternalClient
    from common.mail import MailQueue
    from common.plugins import load_services, sole
    from common.directory import Workspaces
    from people.config import load_config
    from people.mail import PeopleMail
    from people.models import ALIAS
    from people.oidc import OidcSignIn
    from people.passkeys import Passkeys
    from people.privacy import PersonalData
    from people.repository import OidcRepository, PasskeyRepository, PeopleRepository
    from people.service import PeopleService

    config = load_config(settings)
    store = Store(settings, ALIAS)
    client = InternalClient(settings, timeout=5)
    workspaces = Workspaces(client)
    resolver = sole(load_services(), "host_resolver_path")

    @cached(TTLCache(maxsize=10_000, ttl=60))
    def workspace_of_host(host: str) -> str | None:
        """The workspace whose verified custom domain ``host`` is (asked of the domains
        service; answers kept a minute)."""
        if resolver is None:
            return None
        status, body = client.json(resolver[0], "GET", resolver[1], params={"host": host})
        return body.get("slug") if status == 200 and isinstance(body, dict) else None

    mail_queue = MailQueue(store.db["mail"])
    mail = PeopleMail(mail_queue, workspaces.name, languages=workspaces.branding)
    service = PeopleService(PeopleRepository(store), workspaces, client, workspace_of_host, mail, config)
    passkeys = Passkeys(PasskeyRepository(store), service, config)
    oidc = OidcSignIn(service, OidcRepository(store), config)
    holders = {spec.name: spec.personal_data for spec in load_services().values() if spec.personal_data}
    privacy = PersonalData(service, service.repo, client, mail_queue, holders, settings.internal_secret)
    return Context(settings=settings, store=store, config=config, service=service, mail_queue=mail_queue,
                   passkeys=passkeys, oidc=oidc, privacy=privacy)


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="people",
        context="people.plugin:create_context",
        routes=ROUTES,
        internal_routes=INTERNAL_ROUTES,
        topic=contract.TOPIC,
        events=contract.EVENTS,
        consumes=contract.CONSUMES,
        consumers="people.consumers:handlers",
        models="people.models:MODELS",
        workers={"mailer": "people.workers:send_mail"},
        openapi="people:openapi.yaml",
        identity_path=IDENTITY_PATH,
        commands={"invite": "people.cli:invite"},
    )
