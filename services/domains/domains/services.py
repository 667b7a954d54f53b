"""The domains service's logic. Resources validate input and call these methods.

Every status change and its event are written in one transaction (outbox). DNS
lookups happen outside transactions; their result is applied only to the domain and
token it was made for, so a check that races a domain change is dropped.
"""

from __future__ import annotations

import logging
import secrets

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from common.errors import BadRequest, Conflict, NotFound
from common.events import Outbox
from common.ids import now
from domains import contract as c, names, shapes, states
from domains.config import DomainSettings
from domains.dns_check import CheckResult, DnsChecker
from domains.models import DomainConfig

log = logging.getLogger(__name__)


def new_token() -> str:
    return "feedback-verify-" + secrets.token_hex(16)


class DomainService:
    def __init__(self, store, config: DomainSettings, checker: DnsChecker):
        self.store = store
        self.config = config
        self.checker = checker
        self.outbox = Outbox(store.db, c.TOPIC)
        self.domains = DomainConfig._get_collection()

    def shape(self, doc: dict | None) -> dict:
        return shapes.configuration(doc, self.config.cname_target)

    def get(self, slug: str) -> dict | None:
        return self.domains.find_one({"_id": slug})

    # -- set, remove ---------------------------------------------------------------------

    def validate(self, raw: str) -> str:
        domain = names.normalize(raw)
        for own in (self.config.platform_domain, self.config.cname_target):
            if names.within(domain, own):
                raise BadRequest(f"field 'domain' must not be the platform's own domain ({own}) or one of its subdomains")
        return domain

    def set_domain(self, slug: str, raw: str) -> dict:
        """Set (or change) the workspace's domain: pending, with a new token. The same
        domain again changes nothing. Another workspace's domain is a 409."""
        domain = self.validate(raw)

        def work(session):
            doc = self.domains.find_one({"_id": slug}, session=session)
            if doc is not None and doc.get("domain") == domain:
                return doc
            at = now()
            fields = {"domain": domain, "token": new_token(), "updatedAt": at, **states.new_domain(self.config, at)}
            return self._write(session, slug, doc, fields, c.DOMAIN_PENDING, upsert=True)

        for attempt in (1, 2):
            try:
                return self.store.transaction(work)
            except DuplicateKeyError as ex:
                if "domain" in ((ex.details or {}).get("keyPattern") or {"domain": 1}):
                    raise Conflict(f"domain '{domain}' is already used by another workspace") from None
                if attempt == 2:
                    raise Conflict("the domain configuration changed meanwhile; retry") from None
                # Two first PUTs of one workspace raced on its document: the next try sees the winner.

    def remove(self, slug: str) -> dict:
        """Remove the workspace's domain; answer the configuration with status none."""

        def work(session):
            doc = self.domains.find_one({"_id": slug}, session=session)
            if doc is None or doc.get("status", c.NONE) == c.NONE:
                return None
            removed = shapes.none(self.config.cname_target, domain=doc["domain"])
            self.outbox.add(session, c.DOMAIN_REMOVED, slug, removed)
            self.domains.update_one(
                {"_id": slug},
                {"$set": {"status": c.NONE, "errors": [], "verifiedAt": None, "checkedAt": None, "nextCheckAt": None,
                          "deadline": None, "attempts": 0, "inconclusive": 0, "updatedAt": now()},
                 "$unset": {"domain": "", "token": ""}},
                session=session,
            )

        self.store.transaction(work)
        return shapes.none(self.config.cname_target)

    # -- checks ----------------------------------------------------------------------------

    def verify_now(self, slug: str) -> dict:
        """A customer's "check now": look the records up and apply the result."""
        doc = self.get(slug)
        if doc is None or doc.get("status", c.NONE) == c.NONE:
            raise Conflict("this workspace has no custom domain to verify: set one with PUT first")
        return self.apply(doc, self.checker.check(doc["domain"], doc["token"]), manual=True)

    def recheck(self, doc: dict) -> dict:
        """The worker's check of a domain it claimed."""
        return self.apply(doc, self.checker.check(doc["domain"], doc["token"]), manual=False)

    def apply(self, checked: dict, result: CheckResult, manual: bool) -> dict:
        """Apply ``result`` to the domain it was made for; return the current document."""
        slug = checked["_id"]

        def work(session):
            doc = self.domains.find_one({"_id": slug, "domain": checked["domain"], "token": checked["token"]}, session=session)
            if doc is None or doc["status"] == c.NONE:
                return self.domains.find_one({"_id": slug}, session=session)  # changed meanwhile: result is stale
            outcome = states.after_check(self.config, doc, result, now(), manual)
            if outcome.event is not None:
                log.info("domain %s of %s: %s -> %s", doc["domain"], slug, doc["status"], outcome.changes["status"])
            return self._write(session, slug, doc, outcome.changes, outcome.event)

        return self.store.transaction(work)

    def claim_due(self, limit: int) -> list[dict]:
        """Claim up to ``limit`` domains whose check is due (several workers may run)."""
        at = now()
        due = self.domains.find(
            {"nextCheckAt": {"$lte": at}, "status": {"$in": list(c.CHECKED_BY_WORKER)}},
            sort=[("nextCheckAt", 1)],
            limit=limit,
        )
        claimed = []
        for doc in list(due):
            # Moving nextCheckAt is the claim: a worker that dies gives it back after the lease.
            won = self.domains.find_one_and_update(
                {"_id": doc["_id"], "nextCheckAt": doc["nextCheckAt"], "token": doc.get("token")},
                {"$set": {"nextCheckAt": states.later(at, c.CHECK_LEASE_SECONDS)}},
                return_document=ReturnDocument.AFTER,
            )
            if won is not None:
                claimed.append(won)
        return claimed

    # -- the gateway's question --------------------------------------------------------

    def resolve_host(self, host: str) -> str:
        """The slug of the workspace whose verified domain is ``host``."""
        try:
            domain = names.normalize(host)
        except BadRequest:
            domain = None
        doc = self.domains.find_one({"domain": domain, "status": c.VERIFIED}, projection={"_id": 1}) if domain else None
        if doc is None:
            raise NotFound(f"'{host}' is not a verified custom domain")
        return doc["_id"]

    # -- writing a change with its event -----------------------------------------------------

    def _write(self, session, slug: str, doc: dict | None, fields: dict, event: str | None, upsert: bool = False) -> dict:
        fields = {**fields, "updatedAt": now()}
        if event is not None:
            after = {**(doc or {}), **fields}
            self.outbox.add(session, event, slug, self.shape(after))
        return self.domains.find_one_and_update(
            {"_id": slug}, {"$set": fields}, upsert=upsert, return_document=ReturnDocument.AFTER, session=session
        )
