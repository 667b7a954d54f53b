"""A person's data (docs/privacy.md): everything the platform keeps about them, and erasing it.

**Download** (``GET /v1/me/data``): this service's own records (the person, their team
memberships, sessions and passkeys, without any secret) and what every other service keeps
about them, asked of each service that declares ``ServiceSpec.personal_data`` (posts, votes,
comments, follows, preferences, companies...). A service added later with data about people
declares its path and is included, with no change here.

**Erasure** (``DELETE /v1/me/data``, or an owner's ``DELETE /v1/workspaces/{slug}/users/{userId}/data``):
this service's records go in one unit of work with the ``person.erased`` event, which every
other service consumes to remove or anonymise what it keeps (votes withdrawn and counts
recomputed; posts and comments kept as "Deleted user" or deleted, per the workspace's
``erasedContent`` setting; follows, preferences, queued mail). The audit log records the
erasure by the user's id alone.

Who may erase what: a person signed in with the platform's own proof of their address (an
emailed link, an invitation, a passkey registered from one) erases themself everywhere. A
session a workspace vouched for (an SSO token, its identity provider) erases the person on that
workspace only: a workspace can mint a token for any address, so its word must not reach other
workspaces. An owner erases an end user of their workspace there (a team member is removed from
the team first). The person record itself goes when nothing of them remains elsewhere.
"""

from __future__ import annotations

import logging

from bson import ObjectId

from common import auth
from common.addresses import address_digest
from common.errors import BadGateway, Conflict, Forbidden, NotFound
from common.ids import iso, now
from people import contract
from people.repository import PeopleRepository

log = logging.getLogger(__name__)


class PersonalData:
    def __init__(self, service, repo: PeopleRepository, client, mail_queue, holders: dict[str, str], secret: str):
        self.service = service  # people.service.PeopleService: who the caller is, owners
        self.repo = repo
        self.client = client
        self.mail_queue = mail_queue
        self.holders = holders  # {service: its personal_data path}
        self.secret = secret

    # -- download ----------------------------------------------------------------------------

    def download(self, caller: auth.Caller) -> dict:
        """Everything kept about the caller: everywhere for a person proven by the platform,
        on this workspace for anyone else (as erasure reaches)."""
        person, scope = self._self(caller)
        return self._gather(caller.user_id, person, scope)

    def download_user(self, caller: auth.Caller, slug: str, user_id: str) -> dict:
        """What an owner may hand an end user of their workspace who asks: their data there."""
        self.service._require_owner(caller, slug)
        return self._gather(user_id, self._person(user_id), slug)

    def _gather(self, user_id: str, person: dict | None, scope: str | None) -> dict:
        def here(items):
            return [i for i in items if scope is None or i.get("workspace") == scope]

        data = {"userId": user_id, "workspace": scope, "exportedAt": iso(now()), "person": None,
                "memberships": [], "sessions": [], "passkeys": []}
        if person is not None:
            data["person"] = {"id": str(person["_id"]), "email": person["email"], "name": person["name"],
                              "avatarUrl": person.get("avatarUrl"), "createdAt": iso(person.get("createdAt")),
                              "signedInTo": [s for s in person.get("signedInTo", []) if scope is None or s == scope]}
            data["memberships"] = here({"workspace": m["workspace"], "role": m["role"], "joinedAt": iso(m.get("joinedAt"))}
                                       for m in self.repo.memberships_of(person["_id"]))
            data["sessions"] = here({"workspace": s["workspace"], "method": s["method"], "createdAt": iso(s.get("createdAt")),
                                     "lastSeenAt": iso(s.get("lastSeenAt"))} for s in self.repo.sessions_of(person["_id"]))
            data["passkeys"] = here({"workspace": p["workspace"], "name": p["name"], "createdAt": iso(p.get("createdAt"))}
                                    for p in self.repo.passkeys_of_person(person["_id"]))
        for name, path in sorted(self.holders.items()):
            status, body = self.client.json(name, "POST", path, {"userId": user_id, "workspace": scope})
            if status != 200 or not isinstance(body, dict):
                log.warning("personal data: %s answered %s", name, status)
                raise BadGateway(f"the {name} service could not list your data; try again shortly")
            data.update(body)
        return data

    # -- erasure -----------------------------------------------------------------------------

    def erase_me(self, caller: auth.Caller) -> dict:
        person, scope = self._self(caller)
        return self._erase(caller, caller.user_id, person, scope)

    def erase_user(self, caller: auth.Caller, slug: str, user_id: str) -> dict:
        self.service._require_owner(caller, slug)
        person = self._person(user_id)
        if person is None and not user_id.startswith("sso:"):
            raise NotFound(f"no user {user_id!r}: name a person as person:<id> or an SSO user as sso:<id>")
        if person is not None and self.repo.membership(slug, person["_id"]) is not None:
            raise Conflict("this person is on the team: remove them from the team first")
        return self._erase(caller, user_id, person, slug)

    def _self(self, caller: auth.Caller) -> tuple[dict | None, str | None]:
        """The calling person (None: an SSO user without an address) and where their own word
        reaches: everywhere (None) when the platform proved their address, else this workspace."""
        person = self.service._person_of(caller)  # 401 nobody, 403 an API key or the operator
        if person is not None and self.service._proven(caller):
            return person, None
        if not caller.workspace:
            raise Forbidden("sign in on a workspace to manage your data there")
        return person, caller.workspace

    def _person(self, user_id: str) -> dict | None:
        raw = user_id.removeprefix(auth.PERSON_PREFIX)
        if raw == user_id or not ObjectId.is_valid(raw):
            return None
        person = self.repo.person(ObjectId(raw))
        if person is None:
            raise NotFound(f"no person {user_id!r}")
        return person

    def _erase(self, caller: auth.Caller, user_id: str, person: dict | None, scope: str | None) -> dict:
        at = now()
        email = person["email"] if person else None
        # Where the person's own records go: erasing a workspace's last trace of a person
        # erases the person.
        person_scope = scope
        if person is not None and scope is not None and not set(person.get("signedInTo", [])) - {scope} \
                and all(m["workspace"] == scope for m in self.repo.memberships_of(person["_id"])):
            person_scope = None
        actor = auth.actor(caller) if caller.user_id != user_id else {"id": user_id, "name": contract.ERASED_NAME}

        def work(tx: PeopleRepository) -> list[str]:
            memberships = tx.memberships_of(person["_id"]) if person else []
            for m in memberships:
                if (scope is None or m["workspace"] == scope) and m["role"] == "owner" and tx.owner_count(m["workspace"]) <= 1:
                    raise Conflict(f"you are the last owner of '{m['workspace']}': make another member an owner first")
            # Everywhere is only ever a person's own (proven) word: ``person`` is known then.
            places = [scope] if scope is not None else sorted(
                {m["workspace"] for m in memberships} | set(person.get("signedInTo", [])) | ({caller.workspace} - {None}))
            tx.add(*tx.erase(person, user_id, email, person_scope))
            for slug in places:
                tx.add(tx.audit_entry(slug, "person.erased", actor, {"userId": user_id}, at))
            data = {"userId": user_id, "workspace": scope, "actor": actor, "at": iso(at),
                    "addressDigest": address_digest(self.secret, email) if email else None}
            tx.add(tx.event(scope or caller.workspace or (places[0] if places else ""), contract.PERSON_ERASED, data))
            return places

        places = self.repo.unit_of_work(work)
        if email is not None:
            self.mail_queue.forget_address(email, person_scope)
        return {"userId": user_id, "workspace": scope, "erased": True, "workspaces": places}
