"""Every database command and outbox write of the people service.

The service decides; this module knows where persons, members, links, sessions and the audit
log live. A change of a team and its event (and its audit entry) commit together: the service
runs its work in :meth:`transaction` and passes the session down.
"""

from __future__ import annotations

from datetime import datetime

from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.client_session import ClientSession
from pymongo.errors import DuplicateKeyError

from common.db import Store, new_document
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

    def person(self, person_id: ObjectId, session: ClientSession | None = None) -> dict | None:
        return self.persons.find_one({"_id": person_id}, session=session)

    def person_by_email(self, email: str, session: ClientSession | None = None) -> dict | None:
        return self.persons.find_one({"email": email}, session=session)

    def persons_by_id(self, ids: list[ObjectId]) -> dict[ObjectId, dict]:
        return {doc["_id"]: doc for doc in self.persons.find({"_id": {"$in": ids}})}

    def person_for_email(self, email: str, name: str, avatar_url: str | None, at: datetime,
                         session: ClientSession | None = None) -> dict:
        """The person of ``email``, created with ``name`` the first time the address is seen.
        Two first sign-ins at once make one person (the unique index; the loser reads it)."""
        fresh = new_document(Person, email=email, name=name, avatarUrl=avatar_url, createdAt=at, updatedAt=at)
        try:
            return self.persons.find_one_and_update(
                {"email": email}, {"$setOnInsert": fresh}, upsert=True, return_document=ReturnDocument.AFTER, session=session,
            )
        except DuplicateKeyError:
            return self.persons.find_one({"email": email}, session=session)

    def known_or_new_person(self, email: str, name: str, avatar_url: str | None, at: datetime) -> dict:
        """The person of ``email``, read first (the common case, and the local stand-in scans its
        collection for a findAndModify), made with ``name`` when the address is new."""
        return self.person_by_email(email) or self.person_for_email(email, name, avatar_url, at)

    def update_person(self, person_id: ObjectId, fields: dict, at: datetime) -> dict | None:
        doc = self.persons.find_one_and_update(
            {"_id": person_id}, {"$set": {**fields, "updatedAt": at}}, return_document=ReturnDocument.AFTER,
        )
        if doc is not None:  # what live sessions show of their person
            shown = {k: v for k, v in fields.items() if k in ("name", "avatarUrl")}
            self.sessions.update_many({"personId": person_id}, {"$set": shown})
        return doc

    # -- companies an SSO token claims ---------------------------------------------------------

    def claim_digest(self, slug: str, user_id: str, session: ClientSession | None = None) -> str | None:
        doc = self.companies_claims.find_one({"_id": f"{slug} {user_id}"}, session=session)
        return doc["digest"] if doc else None

    def note_claim(self, session: ClientSession, slug: str, user_id: str, digest: str, at: datetime) -> None:
        self.companies_claims.update_one({"_id": f"{slug} {user_id}"}, {"$set": {"digest": digest, "at": at}},
                                         upsert=True, session=session)

    # -- members -----------------------------------------------------------------------------

    def membership(self, slug: str, person_id: ObjectId, session: ClientSession | None = None) -> dict | None:
        return self.memberships.find_one({"workspace": slug, "personId": person_id}, session=session)

    def members(self, slug: str, limit: int) -> list[dict]:
        return list(self.memberships.find({"workspace": slug}).sort([("joinedAt", 1), ("_id", 1)]).limit(limit))

    def owner_count(self, session: ClientSession, slug: str) -> int:
        return self.memberships.count_documents({"workspace": slug, "role": "owner"}, session=session)

    def touch_team(self, session: ClientSession, slug: str) -> None:
        """Write the team's document, so concurrent changes of one team conflict (``Team``)."""
        self.teams.update_one({"_id": slug}, {"$inc": {"version": 1}}, upsert=True, session=session)

    def add_member(self, session: ClientSession, slug: str, person_id: ObjectId, role: str, at: datetime) -> dict:
        """The person's membership with ``role`` (a member already keeps the higher of both)."""
        current = self.membership(slug, person_id, session)
        if current is not None:
            if current["role"] != "owner" and role == "owner":
                self.memberships.update_one({"_id": current["_id"]}, {"$set": {"role": role}}, session=session)
                current["role"] = role
            return current
        doc = new_document(Membership, workspace=slug, personId=person_id, role=role, joinedAt=at)
        self.memberships.insert_one(doc, session=session)
        return doc

    def set_role(self, session: ClientSession, slug: str, person_id: ObjectId, role: str) -> None:
        self.memberships.update_one({"workspace": slug, "personId": person_id}, {"$set": {"role": role}}, session=session)

    def remove_member(self, session: ClientSession, slug: str, person_id: ObjectId) -> None:
        self.memberships.delete_one({"workspace": slug, "personId": person_id}, session=session)

    # -- invitations -------------------------------------------------------------------------

    def invite(self, session: ClientSession, fields: dict) -> dict:
        """Store an invitation; a pending one of the same address and workspace is replaced
        (its link stops working)."""
        self.invitations.delete_many(
            {"workspace": fields["workspace"], "email": fields["email"], "acceptedAt": None}, session=session,
        )
        doc = new_document(Invitation, **fields)
        self.invitations.insert_one(doc, session=session)
        return doc

    def invitations_sent(self, slug: str, since: datetime) -> int:
        """Invitations the team (not the operator) sent since ``since``, replaced ones too: the
        audit log keeps each, where the invitations themselves are replaced."""
        return self.audit.count_documents({"workspace": slug, "at": {"$gt": since}, "type": "invitation.created",
                                           "actor.id": {"$ne": "operator"}})

    def drop_invitations_of(self, session: ClientSession, slug: str, inviter: str) -> int:
        """Pending invitations whose rights came from ``inviter`` (``person:<id>``): they go
        when that member leaves or stops being an owner."""
        return self.invitations.delete_many({"workspace": slug, "inviterPerson": inviter, "acceptedAt": None},
                                            session=session).deleted_count

    def pending_invitations(self, slug: str, at: datetime) -> list[dict]:
        return list(self.invitations.find({"workspace": slug, "acceptedAt": None, "expiresAt": {"$gt": at}}).sort("createdAt", 1))

    def revoke_invitation(self, session: ClientSession, slug: str, invitation_id: ObjectId) -> dict | None:
        return self.invitations.find_one_and_delete({"_id": invitation_id, "workspace": slug, "acceptedAt": None}, session=session)

    def accept_invitation(self, session: ClientSession, token_hash: str, slug: str, at: datetime) -> dict | None:
        """Spend the invitation of this token on this workspace, if it is live: once."""
        return self.invitations.find_one_and_update(
            {"tokenHash": token_hash, "workspace": slug, "acceptedAt": None, "expiresAt": {"$gt": at}},
            {"$set": {"acceptedAt": at}}, return_document=ReturnDocument.AFTER, session=session,
        )

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

    def spend_link(self, session: ClientSession, token_hash: str, slug: str, at: datetime) -> dict | None:
        """The link of this token on this workspace, if live, marked used: once."""
        return self.links.find_one_and_update(
            {"_id": token_hash, "workspace": slug, "usedAt": None, "expiresAt": {"$gt": at}},
            {"$set": {"usedAt": at}}, return_document=ReturnDocument.AFTER, session=session,
        )

    # -- sessions ----------------------------------------------------------------------------

    def add_session(self, fields: dict, session: ClientSession | None = None) -> dict:
        doc = new_document(Session, **fields)
        self.sessions.insert_one(doc, session=session)
        return doc

    def session(self, token_hash: str) -> dict | None:
        return self.sessions.find_one({"_id": token_hash})

    def note_signed_in(self, person_id: ObjectId, slug: str, session: ClientSession | None = None) -> None:
        self.persons.update_one({"_id": person_id, "signedInTo": {"$ne": slug}}, {"$push": {"signedInTo": slug}},
                                session=session)

    def seen(self, token_hash: str, at: datetime) -> None:
        self.sessions.update_one({"_id": token_hash}, {"$set": {"lastSeenAt": at}})

    def end_session(self, token_hash: str) -> dict | None:
        return self.sessions.find_one_and_delete({"_id": token_hash})

    def end_sessions(self, person_id: ObjectId, slug: str | None = None, session: ClientSession | None = None) -> int:
        """End a person's sessions on one workspace, or (``slug`` None) everywhere."""
        query = {"personId": person_id} if slug is None else {"personId": person_id, "workspace": slug}
        return self.sessions.delete_many(query, session=session).deleted_count

    # -- sign-in settings --------------------------------------------------------------------

    def sign_in_settings(self, slug: str) -> dict | None:
        return self.settings.find_one({"_id": slug})

    def set_sign_in_settings(self, session: ClientSession, slug: str, fields: dict, at: datetime) -> dict:
        return self.settings.find_one_and_update(
            {"_id": slug}, {"$set": {**fields, "updatedAt": at}}, upsert=True, return_document=ReturnDocument.AFTER,
            session=session,
        )

    def oidc_button(self, slug: str) -> dict | None:
        """What the public sign-in page shows of the workspace's OpenID Connect provider (its
        label), or None without one (people.oidc configures it)."""
        doc = self.store.collection(OidcProvider).find_one({"_id": slug}, {"name": 1})
        return {"name": doc["name"]} if doc else None

    # -- the audit log -----------------------------------------------------------------------

    def record(self, slug: str, type_: str, actor: dict | None, data: dict, at: datetime,
               session: ClientSession | None = None, entry_id: ObjectId | None = None) -> None:
        """One audit entry. ``entry_id``: a stable id (from the event it reports), so a
        redelivered event is recorded once."""
        doc = new_document(AuditEntry, workspace=slug, type=type_, actor=actor, data=data, at=at)
        if entry_id is not None:
            doc["_id"] = entry_id
        try:
            self.audit.insert_one(doc, session=session)
        except DuplicateKeyError:
            if entry_id is None:
                raise

    def audit_page(self, slug: str, limit: int, offset: int) -> list[dict]:
        return list(self.audit.find({"workspace": slug}).sort([("at", -1), ("_id", -1)]).skip(offset).limit(limit))


class PasskeyRepository:
    """Where passkeys and the challenges of their ceremonies live (``people.passkeys``). Their
    writes that go with a session or an audit entry run in the people repository's transaction
    (one store)."""

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

    def add_passkey(self, session: ClientSession, fields: dict) -> dict:
        """Store a passkey (``DuplicateKeyError`` if this credential is registered on this
        workspace already: the caller's transaction is aborted by then)."""
        doc = new_document(Passkey, **fields)
        self.passkeys.insert_one(doc, session=session)
        return doc

    def passkeys_of(self, slug: str, person_id: ObjectId) -> list[dict]:
        return list(self.passkeys.find({"workspace": slug, "personId": person_id}).sort([("createdAt", 1), ("_id", 1)]))

    def passkey_by_credential(self, slug: str, credential_id: str) -> dict | None:
        return self.passkeys.find_one({"workspace": slug, "credentialId": credential_id})

    def used(self, session: ClientSession, passkey_id: ObjectId, sign_count: int, at: datetime) -> None:
        self.passkeys.update_one({"_id": passkey_id}, {"$set": {"signCount": sign_count, "lastUsedAt": at}}, session=session)

    def remove_passkey(self, session: ClientSession, slug: str, person_id: ObjectId, passkey_id: ObjectId) -> dict | None:
        return self.passkeys.find_one_and_delete({"_id": passkey_id, "workspace": slug, "personId": person_id}, session=session)

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

    def set_provider(self, session: ClientSession, slug: str, fields: dict, at: datetime) -> None:
        """Store the provider; ``fields`` without ``clientSecret`` keep the stored one."""
        sealed = dict(fields)
        if sealed.get("clientSecret") is not None:
            sealed["clientSecret"] = self.box.seal(sealed["clientSecret"])
        insert = {} if "clientSecret" in sealed else {"clientSecret": None}
        self.providers.update_one({"_id": slug}, {"$set": {**sealed, "updatedAt": at}, "$setOnInsert": insert},
                                  upsert=True, session=session)

    def delete_provider(self, session: ClientSession, slug: str) -> dict | None:
        self.states.delete_many({"workspace": slug}, session=session)  # sign-ins under way end with it
        return self.providers.find_one_and_delete({"_id": slug}, session=session)

    def add_state(self, fields: dict) -> None:
        self.states.insert_one(new_document(OidcState, **fields))

    def spend_state(self, state: str, slug: str, at: datetime) -> dict | None:
        """The sign-in of this ``state`` on this workspace, if live, deleted: once."""
        return self.states.find_one_and_delete({"_id": state, "workspace": slug, "expiresAt": {"$gt": at}})
