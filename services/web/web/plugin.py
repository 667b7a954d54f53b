"""The web plugin: the public board site, as pages the gateway proxies outside /v1.

Declarative: the gateway and ``feedback init`` read this spec without importing the
service's code, so ``create_context`` imports what it wires when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.config import Settings
from common.plugins import Route, ServiceContext, ServiceSpec, hookimpl

if TYPE_CHECKING:  # the gateway reads this module: no service code at import
    import jinja2

    from web.config import WebConfig
    from web.platform import Platform
    from web.service import Site

R = "web.resources:"
P = "web.platform:"
A = "web.admin."
B = "/b/{slug}"
PAGES = [
    Route(B, R + "Board", ("GET",)),
    Route(B + "/p/{postId}", R + "PostPage", ("GET",)),
    Route(B + "/p/{postId}/vote", R + "Vote", ("POST",)),
    Route(B + "/p/{postId}/comments", R + "Comment", ("POST",)),
    Route(B + "/p/{postId}/triage", R + "Triage", ("POST",)),
    Route(B + "/p/{postId}/follow", R + "Follow", ("POST",)),
    Route(B + "/p/{postId}/edit", R + "PostEdit", ("GET", "POST")),
    Route(B + "/p/{postId}/delete", R + "PostDelete", ("GET", "POST")),
    Route(B + "/p/{postId}/comments/{commentId}/edit", R + "CommentEdit", ("GET", "POST")),
    Route(B + "/p/{postId}/comments/{commentId}/delete", R + "CommentDelete", ("GET", "POST")),
    Route(B + "/roadmap", R + "Roadmap", ("GET",)),
    Route(B + "/changelog", R + "Changelog", ("GET",)),
    # The changelog as feeds (web.feeds): Atom and JSON Feed, read as nobody.
    Route(B + "/changelog.atom", "web.feeds:ChangelogAtom", ("GET",)),
    Route(B + "/changelog.json", "web.feeds:ChangelogJson", ("GET",)),
    # The changelog by email (web.subscriptions): the page's form, and the pages its mails link to.
    Route(B + "/changelog/subscribe", "web.subscriptions:Subscribe", ("POST",)),
    Route(B + "/changelog/confirm", "web.subscriptions:Confirm", ("GET", "POST")),
    Route(B + "/changelog/unsubscribe", "web.subscriptions:Unsubscribe", ("GET", "POST")),
    Route(B + "/new", R + "NewPost", ("GET", "POST")),
    # The team's first board, from the board and submit pages of a workspace that has none.
    Route(B + "/boards", R + "Boards", ("POST",)),
    Route(B + "/sso", R + "Sso", ("GET", "POST")),
    Route(B + "/sign-in", R + "SignIn", ("GET", "POST")),
    Route(B + "/sign-in/email", R + "EmailLink", ("GET", "POST")),
    Route(B + "/sign-in/oidc", R + "OidcStart", ("GET",)),
    Route(B + "/sign-in/oidc/callback", R + "OidcCallback", ("GET",)),
    Route(B + "/sign-in/passkey/options", R + "PasskeyOptions", ("POST",)),
    Route(B + "/sign-in/passkey", R + "PasskeySignIn", ("POST",)),
    Route(B + "/join", R + "Join", ("GET", "POST")),
    Route(B + "/sign-out", R + "SignOut", ("POST",)),
    Route(B + "/account", R + "Account", ("GET", "POST")),
    Route(B + "/account/passkeys/options", R + "PasskeyRegistrationOptions", ("POST",)),
    Route(B + "/account/passkeys", R + "Passkeys", ("POST",)),
    Route(B + "/account/passkeys/{passkeyId}/remove", R + "PasskeyRemove", ("POST",)),
    Route(B + "/account/sign-out-everywhere", R + "SignOutEverywhere", ("POST",)),
    Route(B + "/account/data", R + "MyData", ("GET", "POST")),
    Route(B + "/account/notifications", R + "Notifications", ("GET", "POST")),
    # A mail's unsubscribe link (and its List-Unsubscribe header's one-click POST, RFC 8058).
    Route(B + "/unsubscribe", R + "Unsubscribe", ("GET", "POST")),
    Route(B + "/admin/sign-in", R + "ManagerSignIn", ("GET",)),
    # The admin area (web.admin): one module per concern.
    Route(B + "/admin", A + "overview:Overview", ("GET",)),
    Route(B + "/admin/setup", A + "setup:Setup", ("GET", "POST")),
    Route(B + "/admin/queue", A + "moderation:Queue", ("GET",)),
    Route(B + "/admin/duplicates", A + "moderation:Duplicates", ("GET",)),
    Route(B + "/admin/duplicates/{suggestionId}", A + "moderation:DuplicateDecision", ("POST",)),
    Route(B + "/admin/changelog", A + "changelog:Changelog", ("GET",)),
    Route(B + "/admin/changelog/new", A + "changelog:ChangelogNew", ("GET", "POST")),
    Route(B + "/admin/changelog/{changelogId}", A + "changelog:ChangelogEntry", ("GET", "POST")),
    Route(B + "/admin/triage", A + "triage:TriageSettings", ("GET",)),
    Route(B + "/admin/triage/tags", A + "triage:TriageTags", ("POST",)),
    Route(B + "/admin/triage/tags/{tagSlug}", A + "triage:TriageTag", ("POST",)),
    Route(B + "/admin/triage/fields", A + "triage:TriageFields", ("POST",)),
    Route(B + "/admin/triage/fields/{fieldKey}/remove", A + "triage:TriageFieldRemove", ("POST",)),
    Route(B + "/admin/triage/formula", A + "triage:TriageFormula", ("POST",)),
    Route(B + "/admin/api-keys", A + "api_keys:ApiKeys", ("GET", "POST")),
    Route(B + "/admin/api-keys/{keyId}/revoke", A + "api_keys:ApiKeyRevoke", ("POST",)),
    Route(B + "/admin/webhooks", A + "webhooks:Webhooks", ("GET", "POST")),
    Route(B + "/admin/webhooks/{webhookId}", A + "webhooks:Webhook", ("GET",)),
    Route(B + "/admin/webhooks/{webhookId}/test", A + "webhooks:WebhookTest", ("POST",)),
    Route(B + "/admin/webhooks/{webhookId}/state", A + "webhooks:WebhookState", ("POST",)),
    Route(B + "/admin/webhooks/{webhookId}/rotate", A + "webhooks:WebhookRotate", ("POST",)),
    Route(B + "/admin/webhooks/{webhookId}/delete", A + "webhooks:WebhookDelete", ("POST",)),
    Route(B + "/admin/webhooks/{webhookId}/deliveries/{deliveryId}/resend", A + "webhooks:WebhookResend", ("POST",)),
    Route(B + "/admin/boards", A + "boards:Boards", ("GET", "POST")),
    Route(B + "/admin/boards/{boardId}", A + "boards:BoardChange", ("POST",)),
    Route(B + "/admin/statuses", A + "statuses:Statuses", ("GET", "POST")),
    Route(B + "/admin/statuses/{statusSlug}", A + "statuses:StatusChange", ("POST",)),
    Route(B + "/admin/domain", A + "domain:Domain", ("GET", "POST")),
    Route(B + "/admin/domain/verify", A + "domain:DomainVerify", ("POST",)),
    Route(B + "/admin/domain/remove", A + "domain:DomainRemove", ("POST",)),
    Route(B + "/admin/widget", A + "widget:Widget", ("GET", "POST")),
    Route(B + "/admin/exports", A + "exports:Exports", ("GET", "POST")),
    Route(B + "/admin/exports/{exportId}/download", A + "exports:ExportDownload", ("GET",)),
    # The form uploads the file to import: the import route's limit, not MAX_BODY_BYTES.
    Route(B + "/admin/imports", A + "imports:Imports", ("GET", "POST"), max_body=32 * 1024 * 1024 + 64 * 1024),
    Route(B + "/admin/audit", A + "audit:Audit", ("GET",)),
    Route(B + "/admin/team", A + "team:Team", ("GET", "POST")),
    Route(B + "/admin/team/members/{personId}", A + "team:TeamMember", ("POST",)),
    Route(B + "/admin/team/invitations/{invitationId}/revoke", A + "team:TeamInvitationRevoke", ("POST",)),
    Route(B + "/admin/settings", A + "settings:Settings", ("GET", "POST")),
    Route(B + "/admin/settings/logo", A + "settings:SettingsLogo", ("POST",)),
    Route(B + "/admin/settings/logo/remove", A + "settings:SettingsLogoRemove", ("POST",)),
    Route(B + "/admin/settings/sso-secret", A + "settings:SettingsSsoSecret", ("POST",)),
    Route(B + "/admin/authentication", A + "authentication:Authentication", ("GET", "POST")),
    Route(B + "/admin/authentication/oidc", A + "authentication:AuthenticationOidc", ("POST",)),
    Route(B + "/admin/authentication/oidc/remove", A + "authentication:AuthenticationOidcRemove", ("POST",)),
    # The visitor's own light/dark/system choice, a cookie (web.preferences).
    Route(B + "/theme", "web.preferences:Theme", ("POST",)),
    # The visitor's language among the workspace's: a cookie, and a signed-in person's own (web.preferences).
    Route(B + "/language", "web.preferences:Language", ("POST",)),
    # For crawlers (web.seo): on a custom domain these are its /sitemap.xml and /robots.txt.
    Route(B + "/sitemap.xml", "web.seo:Sitemap", ("GET",)),
    Route(B + "/robots.txt", "web.seo:Robots", ("GET",)),
    Route(B + "/theme.css", R + "ThemeCss", ("GET",)),
    Route(B + "/static/{name}", R + "Static", ("GET",)),
    # The platform's own pages, outside any workspace (web.platform): the start page, the API
    # reference rendered from the gateway's /v1/openapi.json, and their stylesheet.
    Route("/", P + "Landing", ("GET",)),
    Route("/v1/docs", P + "ApiReference", ("GET",)),
    Route("/static/{name}", P + "PlatformStatic", ("GET",)),
]


@dataclass(kw_only=True)
class Context(ServiceContext):
    config: WebConfig
    site: Site
    templates: jinja2.Environment
    platform: Platform


# The database the kit's app uses for the site (its readiness check); the site keeps no
# collection of its own. The ``sessions`` collection of earlier versions is no longer read: its
# TTL index empties it within a day.
ALIAS = "web"


def create_context(settings: Settings) -> Context:
    from common.db import Store
    from web import seo
    from web.api import ApiClient
    from web.config import load_config
    from web.platform import Platform
    from web.render import environment
    from web.service import Site

    config = load_config(settings)
    site = Site(ApiClient(config.api_url, config.api_timeout), config)
    templates = environment()
    seo.install(templates, settings.public_base_url)  # the pages' canonical addresses
    platform = Platform(site.api, templates, B, site.static_file)
    # Who is signed in is the people service's (the cookie holds its session token).
    return Context(settings=settings, store=Store(settings, ALIAS), config=config, site=site, templates=templates,
                   platform=platform)


@hookimpl
def register_service() -> ServiceSpec:
    return ServiceSpec(
        name="web",
        context="web.plugin:create_context",
        pages=PAGES,
        site_root=B,
    )
