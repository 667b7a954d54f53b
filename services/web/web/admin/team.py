"""Team: the members and their roles, pending invitations, and inviting a colleague (owners
change roles, remove members and invite; managers see who is on the team)."""

from __future__ import annotations

from common.i18n import N_
from common.validation import check
from web import schemas
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor


# A team role's name as the page says it (translated where shown).
ROLE_NAMES = {"owner": N_("Owner"), "manager": N_("Manager")}


class TeamSection(Section):
    path = "/team"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        members = self.call(visitor, "GET", "/members")["items"]
        invitations = self.call(visitor, "GET", "/invitations")["items"]
        return self.page(visitor, "team.html", {"members": members, "invitations": invitations, "roles": schemas.ROLES, "role_names": ROLE_NAMES,
                                                "error": error, "invited": params.get("invited") or ""}, status)

    def invite(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        # The origin the owner browses at leads the link there when it is one of the platform's own.
        payload = {"email": (form.get("email") or "").strip(), "role": form.get("role") or "",
                   **self.site._origin(visitor)}
        try:
            invitation = self.call(visitor, "POST", "/members", payload=payload)
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, invited=invitation["email"])

    def member(self, visitor: Visitor, person_id: str, form: dict):
        self.checked(visitor, form)
        action = check(form, schemas.TEAM_MEMBER)["action"]
        try:
            if action == "role":
                self.call(visitor, "PATCH", f"/members/{person_id}", payload={"role": form.get("role") or ""})
            else:
                self.call(visitor, "DELETE", f"/members/{person_id}")
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor)

    def revoke(self, visitor: Visitor, invitation_id: str, form: dict):
        self.checked(visitor, form)
        self.call(visitor, "DELETE", f"/invitations/{invitation_id}")
        return self.redirect(visitor)


class Team(SectionResource):
    section = TeamSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.invite, form(req))


class TeamMember(SectionResource):
    section = TeamSection

    def on_post(self, req, resp, slug, personId):
        self.respond(req, resp, slug, self.admin.member, personId, form(req))


class TeamInvitationRevoke(SectionResource):
    section = TeamSection

    def on_post(self, req, resp, slug, invitationId):
        self.respond(req, resp, slug, self.admin.revoke, invitationId, form(req))
