"""Every database command and outbox write of the people service.

The service decides; this module knows where persons, members, links, sessions and the audit
log live. A change of a team and its event (and its audit entry) commit together: the service
runs its work in :meth:`unit_of_work`, whose ``tx`` reads in its transaction
(``session=self.session``) and collects the writes the methods below return (an ``Insert``,
``Update`` or ``Delete``, its document in hand) with its event.
"""

from __future__ import annotations

import re
from datetime import datetime

from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from common.db import Delete, Insert, Store, Update, Write, new_document
from common.repository import Repository
from common.secretbox import SecretBox, default_box
from people import contract
from people.models import (
    AuditEntry, CompaniesClaim, Invitation, LinkRequest, Membership, OidcProvider, OidcState, Passkey, Person, Session, SignInLink,
    SignInSettings, Team, WebAuthnChallenge,
)


class PeopleRepository(Repository):
    def __init__(self, store: Store):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.persons = store.collection(Person)
        self.memberships = store.collection(Membership)
        self.teams = store.collection(Team)
        self.invitations = store.collection(Invitation)
        self.links = store.collection(SignInLink)
        self.link_requests = store.collection(LinkRequest)
        self.sessions = store.collection(Session)
        self.settings = store.collection(SignInSettings)
        self.audit = store.collection(AuditEntry)
        self.companies_claims = store.collection(CompaniesClaim)

    # -- persons -----------------------------------------------------------------------------

    def person(self, person_id: ObjectId) -> dict | None:
        return self.persons.find_one({"_id": person_id}, session=self.session)

    def person_by_email(self, email: str) -> dict | None:
        return self.persons.find_one({"email": email}, session=self.session)

    def persons_of_workspace(self, slug: str, member_ids: list[ObjectId], after: ObjectId | None, limit: int) -> list[dict]:
        """Up to ``limit`` persons who are members of ``slug`` or signed in there, in id order
        after ``after`` (an export's page)."""
        query = {"$or": [{"signedInTo": slug}, {"_id": {"$in": member_ids}}], **({"_id": {"$gt": after}} if after else {})}
        return list(self.persons.find(query, sort=[("_id", 1)], limit=limit))

    def persons_by_id(self, ids: list[ObjectId]) -> dict[ObjectId, dict]:
        return {doc["_id"]: doc for doc in self.persons.find({"_id": {"$in": ids}})}

    def person_for_email(self, email: str, name: str, avatar_url: str | None, at: datetime) -> dict:
        """The person of ``email``, created with ``name`` the first time the address is seen.
        Two first sign-ins at once make one person (the unique index; the loser reads it). In a
        unit of work it is written at once, not added: what follows needs the person's id, and
        the person the database holds is the one to use."""
        fresh = new_document(Person, email=email, name=name, avatarUrl=avatar_url, createdAt=at, updatedAt=at)
        try:
            return self.persons.find_one_and_update(
                {"email": email}, {"$setOnInsert": fresh}, upsert=True, return_document=ReturnDocument.AFTER,
                session=self.session,
            )
        except DuplicateKeyError:
            return self.persons.find_one({"email": email}, session=self.session)

    def known_or_new_person(self, email: str, name: str, avatar_url: str | None, at: datetime) -> dict:
        """The person of ``email``, read first (the common case, and the local stand-in scans its
        collection for a findAndModify), made with ``name`` when the address is new."""
        return self.person_by_email(email) or self.person_for_email(email, name, avatar_url, at)

    def update_person(self, person_id: ObjectId, fields: dict, at: datetime) -> dict | None:
        doc = self.persons.find_one_and_update(
            {"_id": person_id}, {"$set": {**fields, "updatedAt": at}}, return_document=ReturnDocument.AFTER,
        )
        shown = {k: v for k, v in fields.items() if k in ("name", "avatarUrl")}
        if doc is not None and shown:  # what live sessions show of their person
            self.sessions.update_many({"personId": person_id}, {"$set": shown})
        return doc

    # -- companies an SSO token claims ---------------------------------------------------------

    def claim_digest(self, slug: str, user_id: str) -> str | None:
        doc = self.companies_claims.find_one({"_id": f"{slug} {user_id}"}, session=self.session)
        return doc["digest"] if doc else None

    def note_claim(self, slug: str, user_id: str, digest: str, at: datetime) -> Update:
        return Update(self.companies_claims, {"_id": f"{slug} {user_id}"}, {"$set": {"digest": digest, "at": at}},
                      upsert=True)

    # -- members -----------------------------------------------------------------------------

    def membership(self, slug: str, person_id: ObjectId) -> dict | None:
        return self.memberships.find_one({"workspace": slug, "personId": person_id}, session=self.session)

    def members(self, slug: str, limit: int) -> list[dict]:
        return list(self.memberships.find({"workspace": slug}).sort([("joinedAt", 1), ("_id", 1)]).limit(limit))

    def owner_count(self, slug: str) -> int:
        return self.memberships.count_documents({"workspace": slug, "role": "owner"}, session=self.session)

    def touch_team(self, slug: str) -> Update:
        """The write of the team's document that makes concurrent changes of one team conflict (``Team``)."""
        return Update(self.teams, {"_id": slug}, {"$inc": {"version": 1}}, upsert=True)

    def new_member(self, slug: str, person_id: ObjectId, role: str, at: datetime) -> Insert:
        return Insert(self.memberships, new_document(Membership, workspace=slug, personId=person_id, role=role, joinedAt=at))

    def set_role(self, slug: str, person_id: ObjectId, role: str) -> Update:
        return Update(self.memberships, {"workspace": slug, "personId": person_id}, {"$set": {"role": role}})

    def remove_member(self, slug: str, person_id: ObjectId) -> Delete:
        return Delete(self.memberships, {"workspace": slug, "personId": person_id})

    # -- invitations -------------------------------------------------------------------------

    def new_invitation(self, fields: dict) -> Insert:
        return Insert(self.invitations, new_document(Invitation, id=ObjectId(), **fields))

    def drop_pending_invitations(self, slug: str, email: str) -> Delete:
        """The pending invitations of ``email`` here (a new one replaces them: their links stop working)."""
        return Delete(self.invitations, {"workspace": slug, "email": email, "acceptedAt": None}, many=True)

    def invitations_sent(self, slug: str, since: datetime) -> int:
        """Invitations the team (not the operator) sent since ``since``, replaced ones too: the
        audit log keeps each, where the invitations themselves are replaced."""
        return self.audit.count_documents({"workspace": slug, "at": {"$gt": since}, "type": "invitation.created",
                                           "actor.id": {"$ne": "operator"}})

    def drop_invitations_of(self, slug: str, inviter: str) -> Delete:
        """Pending invitations whose rights came from ``inviter`` (``person:<id>``): they go
        when that member leaves or stops being an owner."""
        return Delete(self.invitations, {"workspace": slug, "inviterPerson": inviter, "acceptedAt": None}, many=True)

    def pending_invitations(self, slug: str, at: datetime) -> list[dict]:
        return list(self.invitations.find({"workspace": slug, "acceptedAt": None, "expiresAt": {"$gt": at}}).sort("createdAt", 1))

    def pending_invitation(self, slug: str, invitation_id: ObjectId) -> dict | None:
        return self.invitations.find_one({"_id": invitation_id, "workspace": slug, "acceptedAt": None}, session=self.session)

    def revoke_invitation(self, invitation_id: ObjectId) -> Delete:
        return Delete(self.invitations, {"_id": invitation_id, "acceptedAt": None})

    def live_invitation(self, token_hash: str, slug: str, at: datetime) -> dict | None:
        """The invitation of this token on this workspace, if it is live (not accepted, not expired)."""
        return self.invitations.find_one(
            {"tokenHash": token_hash, "workspace": slug, "acceptedAt": None, "expiresAt": {"$gt": at}}, session=self.session,
        )

    def accept_invitation(self, invitation_id: ObjectId, at: datetime) -> Update:
        """Spend the invitation: once (a second acceptance under way conflicts with this write)."""
        return Update(self.invitations, {"_id": invitation_id, "acceptedAt": None}, {"$set": {"acceptedAt": at}})

    # -- sign-in links -----------------------------------------------------------------------

    def link_requests_here(self, email: str, slug: str, since: datetime) -> int:
        return self.link_requests.count_documents({"email": email, "workspace": slug, "at": {"$gt": since}})

    def stranger_link_requests(self, email: str, since: datetime) -> int:
        """Links asked for ``email`` on workspaces where it never signed in, all together."""
        return self.link_requests.count_documents({"email": email, "stranger": True, "at": {"$gt": since}})

    def record_link_request(self, email: str, slug: str, stranger: bool, at: datetime, expires_at: datetime) -> None:
        self.link_requests.insert_one(new_document(LinkRequest, email=email, workspace=slug, stranger=stranger, at=at,
                                                   expiresAt=expires_at))

    def add_link(self, fields: dict) -> None:
        self.links.insert_one(new_document(SignInLink, **fields))

    def live_link(self, token_hash: str, slug: str, at: datetime) -> dict | None:
        """The link of this token on this workspace, if it is live (not used, not expired)."""
        return self.links.find_one({"_id": token_hash, "workspace": slug, "usedAt": None, "expiresAt": {"$gt": at}},
                                   session=self.session)

    def spend_link(self, token_hash: str, at: datetime) -> Update:
        """Mark the link used: once (a second redemption under way conflicts with this write)."""
        return Update(self.links, {"_id": token_hash, "usedAt": None}, {"$set": {"usedAt": at}})

    # -- sessions ----------------------------------------------------------------------------

    def new_session(self, fields: dict) -> Insert:
        return Insert(self.sessions, new_document(Session, **fields))

    def session_by_token(self, token_hash: str) -> dict | None:
        """The session whose token hashes to ``token_hash``. (Not ``session``: that is the unit
        of work's transaction, ``Repository.session``.)"""
        return self.sessions.find_one({"_id": token_hash})

    def note_signed_in(self, person_id: ObjectId, slug: str) -> Update:
        return Update(self.persons, {"_id": person_id, "signedInTo": {"$ne": slug}}, {"$push": {"signedInTo": slug}})

    def seen(self, token_hash: str, at: datetime) -> None:
        self.sessions.update_one({"_id": token_hash}, {"$set": {"lastSeenAt": at}})

    def end_session(self, token_hash: str) -> dict | None:
        return self.sessions.find_one_and_delete({"_id": token_hash})

    def end_sessions(self, person_id: ObjectId, slug: str | None = None) -> Delete:
        """End a person's sessions on one workspace, or (``slug`` None) everywhere."""
        query = {"personId": person_id} if slug is None else {"personId": person_id, "workspace": slug}
        return Delete(self.sessions, query, many=True)

    # -- a person's data (people.privacy) -----------------------------------------------------

    def sessions_of(self, person_id: ObjectId) -> list[dict]:
        return list(self.sessions.find({"personId": person_id}, {"workspace": 1, "method": 1, "createdAt": 1, "lastSeenAt": 1}))

    def memberships_of(self, person_id: ObjectId) -> list[dict]:
        return list(self.memberships.find({"personId": person_id}, session=self.session))

    def passkeys_of_person(self, person_id: ObjectId) -> list[dict]:
        return list(self.store.collection(Passkey).find({"personId": person_id}, {"workspace": 1, "name": 1, "createdAt": 1}))

    def erase(self, person: dict | None, user_id: str, email: str | None, slug: str | None) -> list[Write]:
        """Everything this service keeps about a user, on one workspace (``slug``) or
        everywhere: their sessions, passkeys, links, invitations and claims go; audit entries
        keep what happened with "Deleted user" for the name and no address. The person
        themself goes when erased everywhere (``slug`` None), and their team memberships where
        erased."""
        here = {} if slug is None else {"workspace": slug}
        writes: list[Write] = []
        if person is not None:
            oid = person["_id"]
            writes += [Delete(self.sessions, {"personId": oid, **here}, many=True),
                       Delete(self.store.collection(Passkey), {"personId": oid, **here}, many=True),
                       Delete(self.store.collection(WebAuthnChallenge), {"personId": oid, **here}, many=True),
                       Delete(self.memberships, {"personId": oid, **here}, many=True)]
            if slug is None:
                writes.append(Delete(self.persons, {"_id": oid}))
            else:
                writes.append(Update(self.persons, {"_id": oid}, {"$pull": {"signedInTo": slug}}))
        else:
            writes.append(Delete(self.sessions, {"userId": user_id, **here}, many=True))
        if email is not None:
            writes += [Delete(self.links, {"email": email, **here}, many=True),
                       Delete(self.link_requests, {"email": email, **here}, many=True),
                       Delete(self.invitations, {"email": email, **here}, many=True),
                       Update(self.audit, {"data.email": email, **here}, {"$set": {"data.email": None}}, many=True)]
        claims = {"$regex": f" {re.escape(user_id)}$"} if slug is None else f"{slug} {user_id}"
        writes += [Delete(self.companies_claims, {"_id": claims}, many=True),
                   Update(self.audit, {"actor.id": user_id, **here}, {"$set": {"actor.name": contract.ERASED_NAME}}, many=True),
                   Update(self.audit, {"data.member.id": user_id, **here},
                          {"$set": {"data.member.name": contract.ERASED_NAME}}, many=True)]
        return writes

    # -- sign-in settings --------------------------------------------------------------------

    def sign_in_settings(self, slug: str) -> dict | None:
        return self.settings.find_one({"_id": slug})

    def set_sign_in_settings(self, slug: str, fields: dict, at: datetime) -> Update:
        return Update(self.settings, {"_id": slug}, {"$set": {**fields, "updatedAt": at}}, upsert=True)

    def oidc_button(self, slug: str) -> dict | None:
        """What the public sign-in page shows of the workspace's OpenID Connect provider (its
        label), or None without one (people.oidc configures it)."""
        doc = self.store.collection(OidcProvider).find_one({"_id": slug}, {"name": 1})
        return {"name": doc["name"]} if doc else None

    # -- the audit log -----------------------------------------------------------------------

    def audit_entry(self, slug: str, type_: str, actor: dict | None, data: dict, at: datetime) -> Insert:
        """One audit entry, written with the change it reports."""
        return Insert(self.audit, new_document(AuditEntry, workspace=slug, type=type_, actor=actor, data=data, at=at))

    def record(self, slug: str, type_: str, actor: dict | None, data: dict, at: datetime,
               entry_id: ObjectId | None = None) -> None:
        """One audit entry written now, of what no unit of work changed (a sign-out, another
        service's event). ``entry_id``: a stable id (from the event it reports), so a
        redelivered event is recorded once."""
        doc = self.audit_entry(slug, type_, actor, data, at).document
        if entry_id is not None:
            doc["_id"] = entry_id
        try:
            self.audit.insert_one(doc)
        except DuplicateKeyError:
            if entry_id is None:
                raise

    def audit_page(self, slug: str, limit: int, offset: int, type_: str | None = None) -> list[dict]:
        """Newest first: an index walk by workspace (and type, when asked) in time order."""
        query = {"workspace": slug, **({"type": type_} if type_ else {})}
        return list(self.audit.find(query).sort([("at", -1), ("_id", -1)]).skip(offset).limit(limit))


class PasskeyRepository:
    """Where passkeys and the challenges of their ceremonies live (``people.passkeys``). Its
    writes that go with a session or an audit entry are added to the people repository's unit
    of work (one store)."""

    def __init__(self, store: Store):
        self.passkeys = store.collection(Passkey)
        self.challenges = store.collection(WebAuthnChallenge)

    # -- challenges ----------------------------------------------------------------------------

    def add_challenge(self, fields: dict) -> None:
        self.challenges.insert_one(new_document(WebAuthnChallenge, **fields))

    def spend_challenge(self, challenge: str, slug: str, kind: str, at: datetime, session_id: str | None = None) -> dict | None:
        """The live challenge of this workspace and ceremony (and, for a registration, of this
        session), removed: it answers once."""
        query = {"_id": challenge, "workspace": slug, "kind": kind, "expiresAt": {"$gt": at}}
        if session_id is not None:
            query["sessionId"] = session_id
        return self.challenges.find_one_and_delete(query)

    # -- passkeys ------------------------------------------------------------------------------

    def new_passkey(self, fields: dict) -> Insert:
        """A passkey to store (its write raises ``DuplicateKeyError`` if this credential is
        registered on this workspace already, and the unit of work is aborted)."""
        return Insert(self.passkeys, new_document(Passkey, id=ObjectId(), **fields))

    def passkeys_of(self, slug: str, person_id: ObjectId) -> list[dict]:
        return list(self.passkeys.find({"workspace": slug, "personId": person_id}).sort([("createdAt", 1), ("_id", 1)]))

    def passkey_by_credential(self, slug: str, credential_id: str) -> dict | None:
        return self.passkeys.find_one({"workspace": slug, "credentialId": credential_id})

    def passkey_of(self, slug: str, person_id: ObjectId, passkey_id: ObjectId) -> dict | None:
        return self.passkeys.find_one({"_id": passkey_id, "workspace": slug, "personId": person_id})

    def used(self, passkey_id: ObjectId, sign_count: int, at: datetime) -> Update:
        return Update(self.passkeys, {"_id": passkey_id}, {"$set": {"signCount": sign_count, "lastUsedAt": at}})

    def remove_passkey(self, slug: str, person_id: ObjectId, passkey_id: ObjectId) -> Delete:
        return Delete(self.passkeys, {"_id": passkey_id, "workspace": slug, "personId": person_id})

# -- OpenID Connect (people.oidc) ---------------------------------------------------------------



class OidcRepository:
    """A workspace's OpenID Connect provider and the sign-ins under way. The client secret is
    stored sealed (:mod:`common.secretbox`): written sealed, read back opened."""

    def __init__(self, store: Store, box: SecretBox | None = None):
        self.box = box or default_box()
        self.providers = store.collection(OidcProvider)
        self.states = store.collection(OidcState)

    def provider(self, slug: str) -> dict | None:
        doc = self.providers.find_one({"_id": slug})
        return {**doc, "clientSecret": self.box.open(doc.get("clientSecret"))} if doc else None

    def set_provider(self, slug: str, fields: dict, at: datetime) -> Update:
        """Store the provider; ``fields`` without ``clientSecret`` keep the stored one."""
        sealed = dict(fields)
        if sealed.get("clientSecret") is not None:
            sealed["clientSecret"] = self.box.seal(sealed["clientSecret"])
        insert = {} if "clientSecret" in sealed else {"clientSecret": None}
        return Update(self.providers, {"_id": slug}, {"$set": {**sealed, "updatedAt": at}, "$setOnInsert": insert},
                      upsert=True)

    def delete_provider(self, slug: str) -> list[Write]:
        """The provider's delete (first: its count says whether there was one) and its sign-ins
        under way, which end with it."""
        return [Delete(self.providers, {"_id": slug}), Delete(self.states, {"workspace": slug}, many=True)]

    def add_state(self, fields: dict) -> None:
        self.states.insert_one(new_document(OidcState, **fields))

    def spend_state(self, state: str, slug: str, at: datetime) -> dict | None:
        """The sign-in of this ``state`` on this workspace, if live, deleted: once."""
        return self.states.find_one_and_delete({"_id": state, "workspace": slug, "expiresAt": {"$gt": at}})
