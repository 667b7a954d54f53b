"""Falcon resources of the people service, one class per URI template: HTTP only.

Each reads the path, query and body, calls the service (which checks who may, then what),
and sets the media it returns.
"""

from __future__ import annotations

import falcon

from common.validation import media, page_params, param
from people import schemas


class Resource:
    def __init__(self, context):
        self.service = context.service


class Me(Resource):
    """GET / PATCH /v1/me: who is signed in."""

    def on_get(self, req, resp):
        resp.media = self.service.me(req.context.caller)

    def on_patch(self, req, resp):
        resp.media = self.service.update_me(req.context.caller, media(req))


class WorkspaceMe(Resource):
    """GET /v1/workspaces/{slug}/me: who the caller is, an end user's token included."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.me(req.context.caller)


class MyData:
    """GET /v1/me/data: everything kept about the caller; DELETE: erase them (people.privacy)."""

    def __init__(self, context):
        self.privacy = context.privacy

    def on_get(self, req, resp):
        resp.media = self.privacy.download(req.context.caller)

    def on_delete(self, req, resp):
        resp.media = self.privacy.erase_me(req.context.caller)
        resp.status = falcon.HTTP_202  # the other services erase as the event reaches them


class UserData:
    """GET / DELETE /v1/workspaces/{slug}/users/{userId}/data: an owner's copy or erasure of
    an end user's data on their workspace."""

    def __init__(self, context):
        self.privacy = context.privacy

    def on_get(self, req, resp, slug, userId):
        resp.media = self.privacy.download_user(req.context.caller, slug, userId)

    def on_delete(self, req, resp, slug, userId):
        resp.media = self.privacy.erase_user(req.context.caller, slug, userId)
        resp.status = falcon.HTTP_202


class SignOut(Resource):
    """POST /v1/me/sign-out: end this session."""

    def on_post(self, req, resp):
        self.service.sign_out(req.context.caller)
        resp.status = falcon.HTTP_204


class SignOutEverywhere(Resource):
    """POST /v1/me/sign-out-everywhere: end every session of the signed-in person."""

    def on_post(self, req, resp):
        resp.media = self.service.sign_out_everywhere(req.context.caller)


class Sessions(Resource):
    """POST /v1/workspaces/{slug}/sessions: a session for the user of an SSO token."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.session_from_token(req.context.caller, slug)
        resp.status = falcon.HTTP_201


class EmailLink(Resource):
    """POST /v1/workspaces/{slug}/sign-in/email: mail a sign-in link."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.request_link(req.context.caller, slug, media(req))
        resp.status = falcon.HTTP_202


class EmailLinkRedeem(Resource):
    """POST /v1/workspaces/{slug}/sign-in/email/redeem: the link's token for a session."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.redeem_link(slug, media(req))
        resp.status = falcon.HTTP_201


class SignInSettings(Resource):
    """GET / PATCH /v1/workspaces/{slug}/sign-in-settings."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.sign_in_settings(slug)

    def on_patch(self, req, resp, slug):
        resp.media = self.service.update_sign_in_settings(req.context.caller, slug, media(req))


class Members(Resource):
    """GET / POST /v1/workspaces/{slug}/members: the team; invite someone."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.members(req.context.caller, slug, param(req, "limit", schemas.MEMBERS_PAGE))

    def on_post(self, req, resp, slug):
        resp.media = self.service.invite(req.context.caller, slug, media(req))
        resp.status = falcon.HTTP_201


class Member(Resource):
    """PATCH / DELETE /v1/workspaces/{slug}/members/{personId}."""

    def on_patch(self, req, resp, slug, personId):
        resp.media = self.service.change_role(req.context.caller, slug, personId, media(req))

    def on_delete(self, req, resp, slug, personId):
        self.service.remove(req.context.caller, slug, personId)
        resp.status = falcon.HTTP_204


class Invitations(Resource):
    """GET /v1/workspaces/{slug}/invitations: the pending ones."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.invitations(req.context.caller, slug)


class Invitation(Resource):
    """DELETE /v1/workspaces/{slug}/invitations/{invitationId}: revoke it."""

    def on_delete(self, req, resp, slug, invitationId):
        self.service.revoke_invitation(req.context.caller, slug, invitationId)
        resp.status = falcon.HTTP_204


class InvitationAccept(Resource):
    """POST /v1/workspaces/{slug}/invitations/accept: join the team and sign in."""

    def on_post(self, req, resp, slug):
        resp.media = self.service.accept_invitation(slug, media(req))
        resp.status = falcon.HTTP_201


class AuditLog(Resource):
    """GET /v1/workspaces/{slug}/audit-log."""

    def on_get(self, req, resp, slug):
        limit, offset = page_params(req, schemas.AUDIT_PAGE)
        type_ = param(req, "type", schemas.AUDIT_TYPE)
        resp.media = self.service.audit_log(req.context.caller, slug, limit, offset, type_)


# -- OpenID Connect (people.oidc) ------------------------------------------------------------


class OidcResource:
    def __init__(self, context):
        self.oidc = context.oidc


class OidcProvider(OidcResource):
    """GET / PUT / DELETE /v1/workspaces/{slug}/oidc: the workspace's identity provider."""

    def on_get(self, req, resp, slug):
        resp.media = self.oidc.provider(req.context.caller, slug)

    def on_put(self, req, resp, slug):
        resp.media = self.oidc.set_provider(req.context.caller, slug, media(req))

    def on_delete(self, req, resp, slug):
        self.oidc.delete_provider(req.context.caller, slug)
        resp.status = falcon.HTTP_204


class OidcStart(OidcResource):
    """POST /v1/workspaces/{slug}/sign-in/oidc: where to send the browser to sign in."""

    def on_post(self, req, resp, slug):
        resp.media = self.oidc.start(slug, media(req))


class OidcCallback(OidcResource):
    """POST /v1/workspaces/{slug}/sign-in/oidc/callback: the provider's answer for a session."""

    def on_post(self, req, resp, slug):
        resp.media = self.oidc.finish(slug, media(req))
        resp.status = falcon.HTTP_201


# -- internal (not routed by the gateway) -------------------------------------------------


class Identity(Resource):
    """POST /internal/identity: the gateway asks who a credential belongs to."""

    def on_post(self, req, resp):
        resp.media = self.service.identify(media(req))


class PeopleResolve(Resource):
    """POST /internal/people/resolve: the person of an address, made if none exists yet."""

    def on_post(self, req, resp):
        resp.media = self.service.resolve(media(req))


class PeopleLookup(Resource):
    """POST /internal/people/lookup: the address and name of persons, by id (for mail)."""

    def on_post(self, req, resp):
        resp.media = self.service.lookup(media(req))


class TeamDirectory(Resource):
    """GET /internal/workspaces/{slug}/team: a workspace's team members with their addresses."""

    def on_get(self, req, resp, slug):
        resp.media = self.service.team(slug)


# -- passkeys (people.passkeys) -----------------------------------------------------------


class PasskeyResource:
    def __init__(self, context):
        self.passkeys = context.passkeys


class PasskeyRegistrationOptions(PasskeyResource):
    """POST /v1/workspaces/{slug}/passkeys/registration-options: start registering a passkey."""

    def on_post(self, req, resp, slug):
        resp.media = self.passkeys.registration_options(req.context.caller, slug, media(req))


class Passkeys(PasskeyResource):
    """GET / POST /v1/workspaces/{slug}/passkeys: the caller's passkeys here; register one."""

    def on_get(self, req, resp, slug):
        resp.media = self.passkeys.own(req.context.caller, slug)

    def on_post(self, req, resp, slug):
        resp.media = self.passkeys.register(req.context.caller, slug, media(req))
        resp.status = falcon.HTTP_201


class Passkey(PasskeyResource):
    """DELETE /v1/workspaces/{slug}/passkeys/{passkeyId}: remove one of the caller's."""

    def on_delete(self, req, resp, slug, passkeyId):
        self.passkeys.remove(req.context.caller, slug, passkeyId)
        resp.status = falcon.HTTP_204


class PasskeySignInOptions(PasskeyResource):
    """POST /v1/workspaces/{slug}/sign-in/passkey/options: a challenge to sign in with a passkey."""

    def on_post(self, req, resp, slug):
        resp.media = self.passkeys.sign_in_options(slug, media(req))


class PasskeySignIn(PasskeyResource):
    """POST /v1/workspaces/{slug}/sign-in/passkey: the passkey's answer, traded for a session."""

    def on_post(self, req, resp, slug):
        resp.media = self.passkeys.sign_in(slug, media(req))
        resp.status = falcon.HTTP_201


class PeopleExport(Resource):
    """POST /internal/people/export: a page of a workspace's people, for the portability service."""

    def on_post(self, req, resp):
        resp.media = self.service.export(media(req))


class PeopleImport(Resource):
    """POST /internal/people/import: a batch of the people an import brings, for the portability service."""

    def on_post(self, req, resp):
        resp.media = self.service.import_people(media(req))
