"""Passkeys (WebAuthn): registered by a signed-in person, then enough alone to sign in.

One thin layer over py_webauthn (the ``webauthn`` package): it builds the options a browser
passes to ``navigator.credentials.create()`` / ``.get()``, keeps each ceremony's challenge for
5 minutes, and verifies the answer against that challenge, the origin it was asked from and
that origin's host as the relying party id. The library's many exceptions become one answer
of ours, a 400 naming why; nothing outside this module touches the library.

A passkey belongs to a person on one workspace: it is looked up by (workspace, credential id),
so one registered on workspace A signs nobody in on B. Sign-in is discoverable (the browser
offers the passkeys it holds for the site, nothing is typed): the options name no credential.

A passkey gives no more than the session that registered it had. One registered from a team
member's session signs in with the member's role (read again at sign-in); one registered from
an end user's session (an SSO token, a workspace's identity provider outside its team domain,
a link where the person was not yet on the team) signs in as an end user, whatever team the
person is on: a customer's app that vouches for an owner's address gets no owner's passkey.
"""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from urllib.parse import urlsplit

from bson import ObjectId
from pymongo.errors import DuplicateKeyError
from webauthn import (
    generate_authentication_options, generate_registration_options, verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, options_to_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria, AuthenticatorTransport, PublicKeyCredentialDescriptor, ResidentKeyRequirement,
    UserVerificationRequirement,
)

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.ids import iso, now, object_id
from common.validation import check
from people import schemas
from people.config import PeopleConfig
from people.repository import PasskeyRepository, PeopleRepository
from people.service import PeopleService, actor_of, session_proven

METHOD = "passkey"  # the sign-in method's name in contract.METHODS and on sessions
CHALLENGE_SECONDS = 5 * 60
CHALLENGE_BYTES = 32
TRANSPORTS = {t.value for t in AuthenticatorTransport}
DEFAULT_NAME = "Passkey"


class Passkeys:
    def __init__(self, repo: PasskeyRepository, people: PeopleService, config: PeopleConfig):
        self.repo = repo
        self.people = people
        self.config = config

    # -- registration (a signed-in person) -------------------------------------------------------

    def registration_options(self, caller: auth.Caller, slug: str, body) -> dict:
        person = self._signed_in_person(caller, slug)
        if not caller.role:  # an end user's session registers an end user's passkey
            self._require_offered_to_end_users(slug)
        origin = self.people.origin(slug, check(body, schemas.PASSKEY_OPTIONS).get("origin"))
        challenge = self._challenge(slug, "registration", origin, person_id=person["_id"], session_id=caller.session_id)
        options = generate_registration_options(
            rp_id=_rp_id(origin), rp_name=self.people.workspaces.name(slug) or slug,
            user_id=person["_id"].binary, user_name=person["email"], user_display_name=person["name"],
            challenge=challenge, timeout=CHALLENGE_SECONDS * 1000,
            # Discoverable: the passkey carries who it is for, so signing in asks for nothing.
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.PREFERRED,
            ),
            # The browser refuses to make a second passkey here on an authenticator holding one.
            exclude_credentials=[_descriptor(doc) for doc in self.repo.passkeys_of(slug, person["_id"])],
        )
        return {"challengeId": bytes_to_base64url(challenge), "publicKey": _options_json(options)}

    def register(self, caller: auth.Caller, slug: str, body) -> dict:
        person = self._signed_in_person(caller, slug)
        fields = check(body, schemas.REGISTER_PASSKEY)
        challenge = self.repo.spend_challenge(fields["challengeId"], slug, "registration", now(), caller.session_id)
        if challenge is None or challenge["personId"] != person["_id"]:
            raise BadRequest("this challenge is not valid for this session, was used already or has expired; ask for a new one")
        credential = fields["credential"]
        verified = _verified(verify_registration_response, credential=credential,
                             expected_challenge=base64url_to_bytes(challenge["_id"]),
                             expected_origin=challenge["origin"], expected_rp_id=_rp_id(challenge["origin"]))
        at = now()
        transports = [t for t in credential["response"].get("transports") or [] if t in TRANSPORTS]
        name = (fields.get("name") or "").strip() or DEFAULT_NAME
        registered_from = self.people.repo.session_by_token(caller.session_id)
        if registered_from is None:
            raise Unauthorized("this session has ended; sign in again")

        def work(tx: PeopleRepository) -> dict:
            passkey = self.repo.new_passkey({
                "workspace": slug, "personId": person["_id"], "credentialId": bytes_to_base64url(verified.credential_id),
                "publicKey": verified.credential_public_key, "signCount": verified.sign_count, "transports": transports,
                "name": name, "createdAt": at,
                # What the registering session had is all the passkey will ever give.
                "team": bool(registered_from.get("role")), "proven": session_proven(registered_from),
            })
            tx.add(passkey)
            tx.add(tx.audit_entry(slug, "passkey.registered", actor_of(person),
                                  {"passkey": {"id": str(passkey.document["_id"]), "name": name}}, at))
            return passkey.document

        try:
            return _shape(self.people.repo.unit_of_work(work))
        except DuplicateKeyError:
            raise Conflict("this passkey is registered on this workspace already") from None

    def own(self, caller: auth.Caller, slug: str) -> dict:
        person = self._signed_in_person(caller, slug)
        return {"items": [_shape(doc) for doc in self.repo.passkeys_of(slug, person["_id"])]}

    def remove(self, caller: auth.Caller, slug: str, passkey_id: str) -> None:
        person = self._signed_in_person(caller, slug)
        oid = object_id(passkey_id, "passkey")
        unknown = f"no passkey {passkey_id} of yours on this workspace"  # someone else's too: nobody learns which ids exist
        doc = self.repo.passkey_of(slug, person["_id"], oid)
        if doc is None:
            raise NotFound(unknown)

        def work(tx: PeopleRepository) -> None:
            tx.add(self.repo.remove_passkey(slug, person["_id"], oid))
            if tx.flush() != [1]:
                raise NotFound(unknown)  # removed meanwhile, by another request of theirs
            tx.add(tx.audit_entry(slug, "passkey.removed", actor_of(person),
                                  {"passkey": {"id": str(doc["_id"]), "name": doc["name"]}}, now()))

        self.people.repo.unit_of_work(work)

    def _signed_in_person(self, caller: auth.Caller, slug: str) -> dict:
        """The person of a session of this workspace: passkeys are a person's, never an API
        key's or the operator's."""
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("sign in to manage your passkeys")
        if not caller.session_id or not (caller.user_id or "").startswith(auth.PERSON_PREFIX):
            raise Forbidden("passkeys belong to a person signed in with a session (not an API key or the operator)")
        if caller.workspace != slug:
            raise Forbidden("this session belongs to another workspace")
        person = self.people.repo.person(ObjectId(caller.user_id[len(auth.PERSON_PREFIX):]))
        if person is None:
            raise Unauthorized("this session's person is gone; sign in again")
        return person

    # -- sign-in (anyone) ------------------------------------------------------------------------

    def sign_in_options(self, slug: str, body) -> dict:
        origin = self.people.origin(slug, check(body, schemas.PASSKEY_OPTIONS).get("origin"))
        self.people.workspaces.require(slug)
        challenge = self._challenge(slug, "authentication", origin)
        options = generate_authentication_options(
            rp_id=_rp_id(origin), challenge=challenge, timeout=CHALLENGE_SECONDS * 1000,
            user_verification=UserVerificationRequirement.PREFERRED,
        )
        return {"challengeId": bytes_to_base64url(challenge), "publicKey": _options_json(options)}

    def sign_in(self, slug: str, body) -> dict:
        fields = check(body, schemas.PASSKEY_SIGN_IN)
        # Spent before anything is checked: a failed answer burns it as a good one does.
        challenge = self.repo.spend_challenge(fields["challengeId"], slug, "authentication", now())
        if challenge is None:
            raise BadRequest("this challenge is not valid here, was used already or has expired; ask for a new one")
        credential = fields["credential"]
        passkey = self.repo.passkey_by_credential(slug, _canonical_id(credential["rawId"]))
        if passkey is None:
            raise BadRequest("this passkey is not registered on this workspace")
        user_handle = credential["response"].get("userHandle")
        if user_handle and _decode(user_handle) != passkey["personId"].binary:
            raise BadRequest("this passkey answered for another person")
        verified = _verified(verify_authentication_response, credential=credential,
                             expected_challenge=base64url_to_bytes(challenge["_id"]),
                             expected_origin=challenge["origin"], expected_rp_id=_rp_id(challenge["origin"]),
                             credential_public_key=passkey["publicKey"],
                             # The library refuses a count that did not grow (unless both are 0,
                             # an authenticator that keeps none): a cloned authenticator.
                             credential_current_sign_count=passkey["signCount"])
        person = self.people.repo.person(passkey["personId"])
        if person is None:
            raise BadRequest("this passkey's person is gone")
        membership = self.people.repo.membership(slug, person["_id"]) if passkey.get("team") else None
        if membership is None:
            self._require_offered_to_end_users(slug)

        def work(tx: PeopleRepository) -> dict:
            tx.add(self.repo.used(passkey["_id"], verified.new_sign_count, now()))
            started, writes = self.people._start(slug, person, membership["role"] if membership else None, METHOD,
                                                 proven=bool(passkey.get("proven")))
            tx.add(*writes)
            return started

        return self.people.repo.unit_of_work(work)

    def _require_offered_to_end_users(self, slug: str) -> None:
        """403 unless the workspace offers passkeys to its users (team members may use every method)."""
        if METHOD not in self.people.end_user_methods(slug):
            raise Forbidden("this workspace does not offer passkey sign-in to its users")

    # -- challenges ------------------------------------------------------------------------------

    def _challenge(self, slug: str, kind: str, origin: str, person_id: ObjectId | None = None,
                   session_id: str | None = None) -> bytes:
        challenge = secrets.token_bytes(CHALLENGE_BYTES)
        self.repo.add_challenge({
            "challenge": bytes_to_base64url(challenge), "workspace": slug, "kind": kind, "personId": person_id,
            "sessionId": session_id, "origin": origin, "expiresAt": now() + timedelta(seconds=CHALLENGE_SECONDS),
        })
        return challenge


def _options_json(options) -> dict:
    """Options in WebAuthn's JSON form (bytes as base64url, enums as their values), as an object."""
    return json.loads(options_to_json(options))


def _rp_id(origin: str) -> str:
    """The relying party a passkey is bound to: the host the browser is on."""
    return urlsplit(origin).hostname


def _descriptor(doc: dict) -> PublicKeyCredentialDescriptor:
    return PublicKeyCredentialDescriptor(
        id=base64url_to_bytes(doc["credentialId"]), transports=[AuthenticatorTransport(t) for t in doc.get("transports") or []],
    )


def _shape(doc: dict) -> dict:
    return {"id": str(doc["_id"]), "name": doc["name"], "createdAt": iso(doc["createdAt"]),
            "lastUsedAt": iso(doc.get("lastUsedAt"))}


def _decode(value: str) -> bytes:
    try:
        return base64url_to_bytes(value)
    except ValueError:  # binascii.Error: a length no base64 has
        raise BadRequest("the credential is not valid base64url") from None


def _canonical_id(raw_id: str) -> str:
    """A credential id as stored (unpadded base64url of its bytes)."""
    return bytes_to_base64url(_decode(raw_id))


def _verified(verify, **arguments):
    """The library's verification, its refusals as one 400. Malformed input can also surface as
    a ValueError, TypeError or KeyError deep in its parsing: the answer is the same."""
    try:
        return verify(**arguments)
    except (WebAuthnException, ValueError, TypeError, KeyError) as ex:
        raise BadRequest(f"the passkey's answer was refused: {ex}") from None
