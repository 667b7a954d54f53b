"""Falcon resources of the companies service, one class per URI template: HTTP only."""

from __future__ import annotations

import falcon

from common.validation import media, page_params
from companies import schemas


class Resource:
    def __init__(self, context):
        self.service = context.service


class CompanyList(Resource):
    """GET /v1/workspaces/{slug}/companies: the workspace's companies (team)."""

    def on_get(self, req, resp, slug):
        limit, offset = page_params(req, schemas.COMPANIES_PAGE)
        resp.media = self.service.companies(req.context.caller, slug, limit, offset)


class CompanyItem(Resource):
    """GET / PUT / DELETE /v1/workspaces/{slug}/companies/{companyId}: one company, upserted by its id (team)."""

    def on_get(self, req, resp, slug, companyId):
        resp.media = self.service.company(req.context.caller, slug, companyId)

    def on_put(self, req, resp, slug, companyId):
        resp.media, created = self.service.put_company(req.context.caller, slug, companyId, media(req))
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200

    def on_delete(self, req, resp, slug, companyId):
        self.service.delete_company(req.context.caller, slug, companyId)
        resp.status = falcon.HTTP_204


class MemberList(Resource):
    """GET / POST /v1/workspaces/{slug}/companies/{companyId}/members: who belongs to a company (team)."""

    def on_get(self, req, resp, slug, companyId):
        limit, offset = page_params(req, schemas.MEMBERS_PAGE)
        resp.media = self.service.members(req.context.caller, slug, companyId, limit, offset)

    def on_post(self, req, resp, slug, companyId):
        resp.media = self.service.add_member(req.context.caller, slug, companyId, media(req))


class MemberItem(Resource):
    """DELETE /v1/workspaces/{slug}/companies/{companyId}/members/{userId}: a user leaves a company (team)."""

    def on_delete(self, req, resp, slug, companyId, userId):
        self.service.remove_member(req.context.caller, slug, companyId, userId)
        resp.status = falcon.HTTP_204


class CompaniesExport(Resource):
    """POST /internal/companies/export: a page of a workspace's companies, for the portability service."""

    def on_post(self, req, resp):
        resp.media = self.service.export(media(req))


class CompaniesImport(Resource):
    """POST /internal/companies/import: a batch of the companies an import brings, for the portability service."""

    def on_post(self, req, resp):
        resp.media = self.service.import_companies(media(req))

