"""The domains service's rules: who may configure a workspace's domain, which names may be
claimed, what a check changes, and which workspace a Host belongs to.

Every permission check happens here, once, before the request body is validated (a caller
without the right learns nothing from validation): managers of the workspace, or the
operator, whose workspace must exist. Each public method returns the response shape.
Database commands are the repository's.

Every status change and its event are written in one transaction (outbox). DNS lookups
happen outside transactions; their result is applied only to the domain and token it was
made for, so a check that races a domain change is dropped.

A claim owns nothing: any workspace may set any domain (pending, with its own token), so whoever
claims a name first cannot keep its real owner out. The name belongs to the first workspace
whose records verify; while it stays verified, every other claim's check fails with a line
saying so. Two checks that verify one name at once cannot both win: the partial unique index
on verified domains (models.py) refuses the second write, whose check then runs again and sees
the winner.
"""

from __future__ import annotations

import logging
import re
import secrets

from pymongo.errors import DuplicateKeyError

from common import auth
from common.errors import BadRequest, Conflict, NotFound
from common.ids import now
from common.validation import check
from common.directory import Workspaces
from domains import contract as c, names, schemas, shapes, states
from domains.config import DomainsConfig
from domains.dns_check import CheckResult, DnsChecker
from domains.repository import DomainRepository

log = logging.getLogger(__name__)

# What a workspace slug can look like: anything else is not a workspace (404) without asking.
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")


# The check of a claim whose records verify while another workspace holds the domain verified.
HELD = ("{domain} is verified by another workspace: it can be verified here only once that workspace "
        "removes it or its records stop verifying (its TXT record removed from DNS)")


def new_token() -> str:
    return "feedback-verify-" + secrets.token_hex(16)


class DomainService:
    def __init__(self, repo: DomainRepository, workspaces: Workspaces, config: DomainsConfig, checker: DnsChecker):
        self.repo = repo
        self.workspaces = workspaces
        self.config = config
        self.checker = checker

    # -- who may ------------------------------------------------------------------------------

    def _require_manager(self, caller: auth.Caller, slug: str) -> None:
        """Managers of ``slug`` or the operator (401/403), of a workspace that exists (404)."""
        if not SLUG.match(slug):
            auth.require_manager(caller, slug)  # who first, even for a name no workspace has
            raise NotFound(f"workspace '{slug}' not found")
        self.workspaces.require_manager(caller, slug)

    # -- the managers' endpoints ----------------------------------------------------------------

    def get(self, caller: auth.Caller, slug: str) -> dict:
        self._require_manager(caller, slug)
        return self._shape(self.repo.configuration(slug))

    def set_domain(self, caller: auth.Caller, slug: str, body) -> dict:
        """Set (or change) the workspace's domain: pending, with a new token. The same
        domain again changes nothing. Another workspace's claim, or its verified domain, does not
        stop this one: only DNS decides who gets the name (see the module's docstring)."""
        self._require_manager(caller, slug)
        domain = self._claimable(check(body, schemas.SET_DOMAIN)["domain"])

        def work(tx: DomainRepository) -> dict:
            doc = tx.configuration(slug)
            if doc is not None and doc.get("domain") == domain:
                return doc
            at = now()
            fields = {"domain": domain, "token": new_token(), **states.new_domain(self.config, at), "updatedAt": at}
            if doc is None:
                doc = tx.new_configuration(slug, fields)
                tx.add(tx.create(doc))
            else:
                doc = {**doc, **fields}
                tx.add(tx.update(slug, fields))
            tx.add(tx.event(slug, c.DOMAIN_PENDING, self._shape(doc)))
            return doc

        for attempt in (1, 2):
            try:
                return self._shape(self.repo.unit_of_work(work))
            except DuplicateKeyError:
                # Two first PUTs of one workspace raced on its document (a pending claim is in no
                # unique index but _id's): the next try sees the winner.
                if attempt == 2:
                    raise Conflict("the domain configuration changed meanwhile; retry") from None

    def remove(self, caller: auth.Caller, slug: str) -> dict:
        """Remove the workspace's domain; answer the configuration with status none (also
        when there was no domain: removing nothing is not an error)."""
        self._require_manager(caller, slug)

        def work(tx: DomainRepository) -> None:
            doc = tx.configuration(slug)
            if doc is None or doc.get("status", c.NONE) == c.NONE:
                return
            removed = shapes.none(self.config.cname_target, domain=doc["domain"])
            tx.add(tx.clear(slug, now()), tx.event(slug, c.DOMAIN_REMOVED, removed))

        self.repo.unit_of_work(work)
        return shapes.none(self.config.cname_target)

    def verify_now(self, caller: auth.Caller, slug: str) -> dict:
        """A customer's "check now": look the records up and apply the result."""
        self._require_manager(caller, slug)
        doc = self.repo.configuration(slug)
        if doc is None or doc.get("status", c.NONE) == c.NONE:
            raise Conflict("this workspace has no custom domain to verify: set one with PUT first")
        return self._shape(self._apply(doc, self.checker.check(doc["domain"], doc["token"]), manual=True))

    # -- the gateway's question ---------------------------------------------------------------

    def resolve_host(self, host: str | None) -> dict:
        """Which workspace's verified domain ``host`` is (internal: the gateway asks)."""
        if not host:
            raise BadRequest("query parameter 'host' is required")
        try:
            domain = names.normalize(host)
        except BadRequest:
            domain = None
        slug = self.repo.owner_of_verified(domain) if domain else None
        if slug is None:
            raise NotFound(f"'{host}' is not a verified custom domain")
        return {"slug": slug}

    # -- the re-check worker --------------------------------------------------------------------

    def claim_due(self, limit: int) -> list[dict]:
        """Claim up to ``limit`` domains whose check is due; a worker that dies gives its
        claims back when the lease ends."""
        at = now()
        return self.repo.claim_due(at, states.later(at, c.CHECK_LEASE_SECONDS), limit)

    def recheck(self, doc: dict) -> dict:
        """The worker's check of a domain it claimed; the document as it is now."""
        return self._apply(doc, self.checker.check(doc["domain"], doc["token"]), manual=False)

    # -- rules ------------------------------------------------------------------------------

    def _claimable(self, raw: str) -> str:
        """The normalised domain, unless it is not a host name or is the platform's own."""
        domain = names.normalize(raw)
        for own in (self.config.platform_domain, self.config.cname_target):
            if names.within(domain, own):
                raise BadRequest(f"field 'domain' must not be the platform's own domain ({own}) or one of its subdomains")
        return domain

    def _apply(self, checked: dict, result: CheckResult, manual: bool) -> dict | None:
        """Apply ``result`` to the domain it was made for; return the current document. Records
        that verify do not verify a domain another workspace holds verified."""
        slug = checked["_id"]

        def work(tx: DomainRepository) -> dict | None:
            doc = tx.configuration_if_unchanged(slug, checked["domain"], checked["token"])
            if doc is None or doc["status"] == c.NONE:
                return tx.configuration(slug)  # changed meanwhile: the result is stale
            outcome = states.after_check(self.config, doc, self._for_claim(tx, doc, result), now(), manual)
            fields = {**outcome.changes, "updatedAt": now()}
            tx.add(tx.update(slug, fields))
            if outcome.event is not None:
                log.info("domain %s of %s: %s -> %s", doc["domain"], slug, doc["status"], fields["status"])
                tx.add(tx.event(slug, outcome.event, self._shape({**doc, **fields})))
            return {**doc, **fields}

        for attempt in (1, 2):
            try:
                return self.repo.unit_of_work(work)
            except DuplicateKeyError:
                # Another workspace's check verified the name between this one's read and its
                # write: run it again, and it reads the winner. Only a third workspace verifying
                # it and losing it again in between could make it fail twice.
                if attempt == 2:
                    raise Conflict("the domain changed meanwhile; check again") from None

    def _for_claim(self, tx: DomainRepository, doc: dict, result: CheckResult) -> CheckResult:
        """``result`` as it counts for this workspace's claim (``tx`` reads in the check's unit of
        work): records that verify are a failure while another workspace holds the domain
        verified (whose own token is in DNS too)."""
        if not result.ok:
            return result
        holder = tx.owner_of_verified(doc["domain"])
        if holder is None or holder == doc["_id"]:
            return result
        return CheckResult([HELD.format(domain=doc["domain"])], conclusive=True)

    def _shape(self, doc: dict | None) -> dict:
        return shapes.configuration(doc, self.config.cname_target)
