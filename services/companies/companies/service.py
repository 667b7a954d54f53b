"""The companies service's API rules: a workspace's companies and who belongs to them.

Companies, their spend and their members are the team's: every method asks for a manager of
the workspace (a team member, a manager API key, the operator) before it reads the body. A
member is a user as the posts service counts votes (``person:<id>``, ``sso:<id>``); one named by
email is the people service's person of that address, made if none exists yet.
"""

from __future__ import annotations

import re

from common import auth
from common.claims import COMPANY_ID
from common.errors import BadRequest, NotFound
from common.ids import iso, now
from common.money import to_cents
from common.directory import People, Workspaces
from common.validation import check
from companies import contract, schemas, shapes
from companies.repository import CompaniesRepository


class CompaniesService:
    def __init__(self, repo: CompaniesRepository, workspaces: Workspaces, people: People):
        self.repo, self.workspaces, self.people = repo, workspaces, people

    # -- companies ---------------------------------------------------------------------------

    def companies(self, caller: auth.Caller, slug: str, limit: int, offset: int) -> dict:
        """The workspace's companies, biggest monthly spend first."""
        self.workspaces.require_manager(caller, slug)
        return {"items": [shapes.company(doc) for doc in self.repo.company_page(slug, limit, offset)]}

    def import_companies(self, body) -> dict:
        """A batch of the companies an import brings (internal: the portability service asks),
        each ``{sourceId, name, monthlySpend, members: [userId]}``: the company of id
        ``<source>-<its id there>`` (or ``companyId``, when the source is our own export: the id
        the team gave it) created or updated, and its members added (a member's other companies
        stay). Their events go out as for any change: the posts service's revenue
        follows them, and no mail is sent for them."""
        fields = check(body, schemas.IMPORT)
        slug, source = fields["workspace"], fields["source"]
        ids, errors = {}, []
        for item in fields["items"]:
            try:
                company_id = _company_id(str(item.get("companyId") or f"{source}-{item['sourceId']}")[:100])
                wanted = {"name": str(item.get("name") or company_id).strip()[:200] or company_id,
                          "spendCents": to_cents(item.get("monthlySpend") or 0, "monthlySpend"), "plan": None, "attributes": {}}
                self._upsert(slug, company_id, lambda before, wanted=wanted: {**wanted, "plan": (before or {}).get("plan"),
                                                                              "attributes": (before or {}).get("attributes", {})}, None)
                for user_id in item.get("members") or []:
                    def after(tx, before, company_id=company_id):
                        return before if company_id in before else [*before, company_id][-contract.MAX_COMPANIES_PER_USER:]
                    self._set_membership(slug, str(user_id), after, None)
                ids[str(item["sourceId"])] = company_id
            except (KeyError, TypeError, ValueError, BadRequest) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        return {"ids": ids, "errors": errors}

    def export(self, body) -> dict:
        """One page of the workspace's companies for its export (internal: the portability
        service asks), in id order after ``after``, each with its monthly spend and members."""
        fields = check(body, schemas.EXPORT)
        slug, limit = fields["workspace"], fields.get("limit", 500)
        docs = self.repo.companies_after(slug, fields.get("after"), limit)
        members = self.repo.members_of(slug, [d["companyId"] for d in docs])
        return {"items": [{**shapes.company(d), "members": sorted(members.get(d["companyId"], ()))} for d in docs],
                "next": docs[-1]["_id"] if len(docs) == limit else None}

    def company(self, caller: auth.Caller, slug: str, company_id: str) -> dict:
        self.workspaces.require_manager(caller, slug)
        return shapes.company(self._existing(slug, company_id))

    def put_company(self, caller: auth.Caller, slug: str, company_id: str, body) -> tuple[dict, bool]:
        """Create or update the company of this id; whether it is new. Its event is written only
        when something the event says changed, so a nightly sync of unchanged companies costs
        no consumer anything."""
        self.workspaces.require_manager(caller, slug)
        company_id = _company_id(company_id)
        fields = check(body, schemas.COMPANY)
        wanted = {
            "name": fields["name"].strip(),
            "spendCents": to_cents(fields.get("monthlySpend", 0), "monthlySpend"),
            "plan": fields.get("plan"),
            "attributes": fields.get("attributes", {}),
        }
        doc, created = self._upsert(slug, company_id, lambda before: wanted, auth.actor(caller))
        return shapes.company(doc), created

    def _upsert(self, slug: str, company_id: str, fields_after, actor: dict | None) -> tuple[dict, bool]:
        """Store what ``fields_after(the stored document or None)`` says the company is now."""

        def work(tx: CompaniesRepository) -> tuple[dict, bool]:
            before = tx.company(slug, company_id)
            wanted = fields_after(before)
            if before is not None and all(before.get(k) == v for k, v in wanted.items()):
                return before, False
            doc = tx.put_company(slug, company_id, wanted, now())
            tx.add(tx.event(slug, contract.COMPANY_UPDATED, {"company": shapes.company(doc), "actor": actor}))
            return doc, before is None

        return self.repo.unit_of_work(work, hot_key=f"company {slug} {company_id}")

    def claimed(self, slug: str, user_id: str, companies: list[dict]) -> None:
        """An SSO token says its user belongs to ``companies`` (the consumer of feedback.people):
        each is created or updated with what the token gives (its other fields are kept), and
        they are the user's companies from now on."""
        for claim in companies:
            def fields_after(before, claim=claim):
                kept = before or {"spendCents": 0, "plan": None, "attributes": {}}
                return {
                    "name": claim["name"].strip(),
                    "spendCents": to_cents(claim["monthlySpend"], "monthlySpend") if "monthlySpend" in claim else kept["spendCents"],
                    "plan": claim["plan"] if "plan" in claim else kept.get("plan"),
                    "attributes": kept.get("attributes") or {},
                }

            self._upsert(slug, claim["id"], fields_after, None)
        named = list(dict.fromkeys(c["id"] for c in companies))
        self._set_membership(slug, user_id, lambda tx, before: named, None)

    def delete_company(self, caller: auth.Caller, slug: str, company_id: str) -> None:
        """Remove the company; its members belong to it no more (the event says it for all)."""
        self.workspaces.require_manager(caller, slug)
        actor = auth.actor(caller)

        def work(tx: CompaniesRepository) -> None:
            doc = tx.company(slug, company_id)
            if doc is None:
                raise NotFound(f"company '{company_id}' not found")
            gone = {"id": doc["companyId"], "name": doc["name"]}
            tx.add(*tx.delete_company(slug, company_id), tx.event(slug, contract.COMPANY_DELETED, {"company": gone, "actor": actor}))

        self.repo.unit_of_work(work, hot_key=f"company {slug} {company_id}")

    def _existing(self, slug: str, company_id: str) -> dict:
        doc = self.repo.company(slug, company_id)
        if doc is None:
            raise NotFound(f"company '{company_id}' not found")
        return doc

    # -- members -----------------------------------------------------------------------------

    def members(self, caller: auth.Caller, slug: str, company_id: str, limit: int, offset: int) -> dict:
        self.workspaces.require_manager(caller, slug)
        self._existing(slug, company_id)
        return {"items": [shapes.membership(m["userId"], m["companies"]) for m in self.repo.members(slug, company_id, limit, offset)]}

    def add_member(self, caller: auth.Caller, slug: str, company_id: str, body) -> dict:
        """Make a user (by ``userId``, or the person of an ``email``) a member of the company."""
        self.workspaces.require_manager(caller, slug)
        named = check(body, schemas.MEMBER)
        user_id = named.get("userId") or self.people.user_of(named["email"])
        return self._change_membership(caller, slug, user_id, add=company_id)

    def remove_member(self, caller: auth.Caller, slug: str, company_id: str, user_id: str) -> None:
        self.workspaces.require_manager(caller, slug)
        self._change_membership(caller, slug, user_id, remove=company_id)

    def personal_data(self, user_id: str, workspace: str | None) -> dict:
        """The companies a user belongs to (people.privacy asks, for their download)."""
        return {"companies": [{"workspace": m["workspace"], "companies": m["companies"], "updatedAt": iso(m.get("updatedAt"))}
                              for m in self.repo.memberships_of(user_id, workspace)]}

    def erase(self, user_id: str, slug: str | None) -> None:
        """A person erased (people.privacy): they leave every company (told as any change of
        membership is, so the revenue behind posts follows), and their membership is gone."""
        for membership in self.repo.memberships_of(user_id, slug):
            where = membership["workspace"]
            self._set_membership(where, user_id, lambda tx, before: [], None)
            self.repo.unit_of_work(lambda tx, where=where: tx.add(tx.drop_membership(where, user_id)))

    def _change_membership(self, caller: auth.Caller, slug: str, user_id: str, add: str | None = None,
                           remove: str | None = None) -> dict:

        def after(tx: CompaniesRepository, before: list[str]) -> list[str]:
            if tx.company(slug, add or remove) is None:
                raise NotFound(f"company '{add or remove}' not found")
            changed = [c for c in before if c != remove] + ([add] if add and add not in before else [])
            if remove and changed == before:
                raise NotFound(f"'{user_id}' is not a member of company '{remove}'")
            if len(changed) > contract.MAX_COMPANIES_PER_USER:
                raise BadRequest(f"a user belongs to at most {contract.MAX_COMPANIES_PER_USER} companies")
            return changed

        return shapes.membership(user_id, self._set_membership(slug, user_id, after, auth.actor(caller)))

    def _set_membership(self, slug: str, user_id: str, after, actor: dict | None) -> list[str]:
        """Make the user's companies ``after(tx, the list before)``; published when it changed."""

        def work(tx: CompaniesRepository) -> list[str]:
            doc = tx.membership(slug, user_id)
            before = doc["companies"] if doc else []
            companies = after(tx, before)
            if companies == before:
                return before
            data = {"userId": user_id, "companies": companies, "actor": actor}
            tx.add(tx.set_membership(slug, user_id, companies, now()), tx.event(slug, contract.MEMBERSHIP_CHANGED, data))
            return companies

        return self.repo.unit_of_work(work, hot_key=f"membership {slug} {user_id}")


def _company_id(value: str) -> str:
    if not isinstance(value, str) or not re.match(COMPANY_ID, value):
        raise BadRequest("a company id is 1-100 letters, digits and '_.:@-', starting with a letter or digit")
    return value
