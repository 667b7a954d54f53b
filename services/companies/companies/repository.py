"""Every database command and outbox write of the companies service.

The service decides; this module knows where companies and memberships live. A change and its
event commit together: the service runs its work in :meth:`unit_of_work`, whose ``tx`` reads
in its transaction and collects the writes below with its event.
"""

from __future__ import annotations

from datetime import datetime

from pymongo import DESCENDING, ReturnDocument

from common.db import Delete, Store, Update, Write
from common.repository import Repository
from companies import contract
from companies.models import Company, Membership


def company_key(slug: str, company_id: str) -> str:
    return f"{slug} {company_id}"


def membership_key(slug: str, user_id: str) -> str:
    return f"{slug} {user_id}"


class CompaniesRepository(Repository):
    def __init__(self, store: Store):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.companies = store.collection(Company)
        self.memberships = store.collection(Membership)

    # -- companies ---------------------------------------------------------------------------

    def company(self, slug: str, company_id: str) -> dict | None:
        return self.companies.find_one({"_id": company_key(slug, company_id)}, session=self.session)

    def company_page(self, slug: str, limit: int, offset: int) -> list[dict]:
        return list(self.companies.find({"workspace": slug})
                    .sort([("spendCents", DESCENDING), ("companyId", 1)]).skip(offset).limit(limit))

    def companies_after(self, slug: str, after: str | None, limit: int) -> list[dict]:
        """Up to ``limit`` of the workspace's companies in id order after ``after`` (an export's page)."""
        query = {"workspace": slug, **({"_id": {"$gt": after}} if after else {})}
        return list(self.companies.find(query, sort=[("_id", 1)], limit=limit))

    def members_of(self, slug: str, company_ids: list[str]) -> dict[str, set[str]]:
        """The users who belong to each of these companies, by company id."""
        members: dict[str, set[str]] = {}
        wanted = set(company_ids)
        for doc in self.memberships.find({"workspace": slug, "companies": {"$in": company_ids}}, projection={"userId": 1, "companies": 1}):
            for company_id in wanted.intersection(doc.get("companies", ())):
                members.setdefault(company_id, set()).add(doc["userId"])
        return members

    def put_company(self, slug: str, company_id: str, fields: dict, at: datetime) -> dict:
        """Create or replace the company's fields; the document as it now is."""
        return self.companies.find_one_and_update(
            {"_id": company_key(slug, company_id)},
            {"$set": {**fields, "updatedAt": at},
             "$setOnInsert": {"workspace": slug, "companyId": company_id, "createdAt": at}},
            upsert=True, return_document=ReturnDocument.AFTER, session=self.session,
        )

    def delete_company(self, slug: str, company_id: str) -> list[Write]:
        """The writes that remove the company and every membership of it."""
        return [
            Delete(self.companies, {"_id": company_key(slug, company_id)}),
            Update(self.memberships, {"workspace": slug, "companies": company_id}, {"$pull": {"companies": company_id}},
                   many=True),
        ]

    # -- memberships -------------------------------------------------------------------------

    def membership(self, slug: str, user_id: str) -> dict | None:
        return self.memberships.find_one({"_id": membership_key(slug, user_id)}, session=self.session)

    def set_membership(self, slug: str, user_id: str, companies: list[str], at: datetime) -> Update:
        """The write that makes ``companies`` the user's."""
        return Update(
            self.memberships,
            {"_id": membership_key(slug, user_id)},
            {"$set": {"companies": companies, "updatedAt": at}, "$setOnInsert": {"workspace": slug, "userId": user_id}},
            upsert=True,
        )

    def memberships_of(self, user_id: str, slug: str | None) -> list[dict]:
        """A user's memberships, in one workspace or in all (a person's data)."""
        return list(self.memberships.find({"userId": user_id, **({"workspace": slug} if slug else {})}))

    def drop_membership(self, slug: str, user_id: str) -> Delete:
        return Delete(self.memberships, {"_id": membership_key(slug, user_id)})

    def members(self, slug: str, company_id: str, limit: int, offset: int) -> list[dict]:
        return list(self.memberships.find({"workspace": slug, "companies": company_id})
                    .sort("userId", 1).skip(offset).limit(limit))
