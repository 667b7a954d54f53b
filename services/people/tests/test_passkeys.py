"""Passkeys through the gateway: real WebAuthn ceremonies without a browser.

``Authenticator`` below is a software authenticator: an EC P-256 key made with ``cryptography``,
answering registration options with a "none" attestation and sign-in options with an assertion,
byte for byte as the WebAuthn spec lays them out (authenticatorData, clientDataJSON, CBOR). The
service verifies them with py_webauthn as it would a browser's.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
from base64 import urlsafe_b64decode, urlsafe_b64encode
from urllib.parse import urlsplit

import cbor2
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from testkit import assert_error, unique_slug

from .helpers import join as join_session

UP, UV, AT = 0x01, 0x04, 0x40  # authenticatorData flags: user present, user verified, attested credential data


def b64(data: bytes) -> str:
    return urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    """One passkey's authenticator: a key pair, a credential id, a signature counter."""

    def __init__(self, sign_count: int = 0):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = secrets.token_bytes(16)
        self.sign_count = sign_count
        self.rp_id: str | None = None
        self.user_handle: bytes | None = None

    def _cose_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        # COSE_Key: kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def _auth_data(self, rp_id: str, flags: int, attested: bytes = b"") -> bytes:
        return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", self.sign_count) + attested

    @staticmethod
    def _client_data(type_: str, challenge: str, origin: str) -> bytes:
        return json.dumps({"type": type_, "challenge": challenge, "origin": origin, "crossOrigin": False}).encode()

    def create(self, options: dict, origin: str) -> dict:
        """What ``navigator.credentials.create({publicKey: options})`` gives, as ``toJSON()``."""
        self.rp_id = options["rp"]["id"]
        self.user_handle = unb64(options["user"]["id"])
        attested = bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + self._cose_key()
        auth_data = self._auth_data(self.rp_id, UP | UV | AT, attested)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        return {
            "id": b64(self.credential_id), "rawId": b64(self.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64(client_data), "attestationObject": b64(attestation), "transports": ["internal"]},
            "clientExtensionResults": {}, "authenticatorAttachment": "platform",
        }

    def get(self, options: dict, origin: str, *, rp_id: str | None = None) -> dict:
        """What ``navigator.credentials.get({publicKey: options})`` gives, as ``toJSON()``."""
        self.sign_count += 1
        auth_data = self._auth_data(rp_id or options["rpId"], UP | UV)
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64(self.credential_id), "rawId": b64(self.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64(client_data), "authenticatorData": b64(auth_data),
                         "signature": b64(signature), "userHandle": b64(self.user_handle)},
            "clientExtensionResults": {}, "authenticatorAttachment": "platform",
        }


# -- helpers ---------------------------------------------------------------------------------------


@pytest.fixture
def origin(stack):
    """The platform's public address (the stack's gateway): the origin a browser on the board has."""
    parts = urlsplit(stack.url)
    return f"{parts.scheme}://{parts.netloc}"


def join(ws, email: str, role: str = "manager") -> str:
    """Invite ``email`` with the workspace's manager key and accept: the member's session token."""
    return join_session(ws, email, role)["token"]


def end_user(ws, address: str) -> str:
    """An end user's session: the SSO handoff of a token with ``address`` (that address's person)."""
    r = ws.api.post(f"{ws.path}/sessions", user=ws.user_token(unique_slug("u"), email=address))
    assert r.status_code == 201, r.text
    assert r.json()["role"] is None
    return r.json()["token"]


def email() -> str:
    return f"{unique_slug('p')}@example.com"


def register(ws, session: str, authenticator: Authenticator, origin: str, name: str | None = None) -> dict:
    r = ws.api.post(f"{ws.path}/passkeys/registration-options", key=session, json={})
    assert r.status_code == 200, r.text
    options = r.json()
    body = {"challengeId": options["challengeId"], "credential": authenticator.create(options["publicKey"], origin)}
    if name is not None:
        body["name"] = name
    r = ws.api.post(f"{ws.path}/passkeys", key=session, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def sign_in_options(ws) -> dict:
    r = ws.api.post(f"{ws.path}/sign-in/passkey/options", json={})
    assert r.status_code == 200, r.text
    return r.json()


def sign_in(ws, authenticator: Authenticator, origin: str, options: dict | None = None, **kw):
    options = options or sign_in_options(ws)
    credential = authenticator.get(options["publicKey"], origin, **kw)
    return ws.api.post(f"{ws.path}/sign-in/passkey", json={"challengeId": options["challengeId"], "credential": credential})


def audit_types(ws) -> list[str]:
    r = ws.api.get(f"{ws.path}/audit-log", key=ws.key)
    assert r.status_code == 200, r.text
    return [entry["type"] for entry in r.json()["items"]]


# -- registration ----------------------------------------------------------------------------------


def test_registration_options_ask_for_a_discoverable_passkey_of_this_person(workspace, origin):
    address = email()
    session = join(workspace, address)
    r = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session)
    assert r.status_code == 200, r.text
    body = r.json()
    options = body["publicKey"]
    assert set(body) == {"challengeId", "publicKey"} and body["challengeId"] == options["challenge"]
    assert options["rp"] == {"id": urlsplit(origin).hostname, "name": "Acme"}
    assert options["user"]["name"] == address
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["authenticatorSelection"]["userVerification"] == "preferred"
    assert options["excludeCredentials"] == []
    me = workspace.api.get("/me", key=session).json()
    assert unb64(options["user"]["id"]).hex() == me["person"]["id"], "the user handle is the person's id"


def test_register_then_sign_in_with_the_passkey_alone(workspace, origin):
    session = join(workspace, email())
    authenticator = Authenticator()
    passkey = register(workspace, session, authenticator, origin, name="Laptop")
    assert passkey["name"] == "Laptop" and passkey["lastUsedAt"] is None and set(passkey) == {"id", "name", "createdAt", "lastUsedAt"}

    r = sign_in(workspace, authenticator, origin)
    assert r.status_code == 201, r.text
    signed_in = r.json()
    assert signed_in["token"].startswith("fbs_") and signed_in["role"] == "manager"
    assert signed_in["workspace"] == workspace.slug
    me = workspace.api.get("/me", key=signed_in["token"])
    assert me.status_code == 200 and me.json()["id"] == workspace.api.get("/me", key=session).json()["id"]

    listed = workspace.api.get(f"{workspace.path}/passkeys", key=signed_in["token"]).json()["items"]
    assert [p["id"] for p in listed] == [passkey["id"]] and listed[0]["lastUsedAt"] is not None
    types = audit_types(workspace)
    assert "passkey.registered" in types and "sign_in" in types

    # Its existing passkeys are excluded from the next registration's options.
    options = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session).json()["publicKey"]
    assert [c["id"] for c in options["excludeCredentials"]] == [b64(authenticator.credential_id)]


def test_the_same_credential_twice_is_a_conflict(workspace, origin):
    session = join(workspace, email())
    authenticator = Authenticator()
    register(workspace, session, authenticator, origin)
    options = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session).json()
    r = workspace.api.post(f"{workspace.path}/passkeys", key=session, json={
        "challengeId": options["challengeId"], "credential": authenticator.create(options["publicKey"], origin)})
    assert_error(r, 409)


def test_api_keys_and_anonymous_callers_cannot_register(workspace):
    assert_error(workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=workspace.key), 403)
    assert_error(workspace.api.post(f"{workspace.path}/passkeys/registration-options"), 401)
    assert_error(workspace.api.get(f"{workspace.path}/passkeys", key=workspace.key), 403)


def test_a_registration_challenge_works_once_and_for_its_own_session(workspace, origin):
    address = email()
    session = join(workspace, address)
    options = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session).json()
    body = {"challengeId": options["challengeId"], "credential": Authenticator().create(options["publicKey"], origin)}
    # Another session of the same person cannot answer it (and does not spend it).
    other_session = end_user(workspace, address)
    assert "challenge" in assert_error(workspace.api.post(f"{workspace.path}/passkeys", key=other_session, json=body), 400)
    r = workspace.api.post(f"{workspace.path}/passkeys", key=session, json=body)
    assert r.status_code == 201, r.text
    body["credential"] = Authenticator().create(options["publicKey"], origin)
    assert "challenge" in assert_error(workspace.api.post(f"{workspace.path}/passkeys", key=session, json=body), 400)


def test_a_registration_from_another_origin_is_refused(workspace, origin):
    session = join(workspace, email())
    r = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session,
                           json={"origin": "https://evil.example"})
    assert "origin" in assert_error(r, 400)
    options = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session).json()
    credential = Authenticator().create(options["publicKey"], "https://evil.example")
    r = workspace.api.post(f"{workspace.path}/passkeys", key=session,
                           json={"challengeId": options["challengeId"], "credential": credential})
    assert "origin" in assert_error(r, 400)
    assert workspace.api.get(f"{workspace.path}/passkeys", key=session).json() == {"items": []}


@pytest.mark.parametrize("credential", [
    None, "x", {}, {"id": "AA", "rawId": "AA", "type": "public-key", "response": {}},
    {"id": "AA", "rawId": "AA", "type": "public-key",
     "response": {"clientDataJSON": "e30", "attestationObject": "AAAA"}},
    {"id": "AA", "rawId": "AA", "type": "public-key",
     "response": {"clientDataJSON": "!!", "attestationObject": "AAAA"}},
    {"id": "A", "rawId": "A", "type": "public-key",
     "response": {"clientDataJSON": "A", "attestationObject": "A"}},
])
def test_a_malformed_registration_is_a_400(workspace, credential):
    session = join(workspace, email())
    options = workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session).json()
    r = workspace.api.post(f"{workspace.path}/passkeys", key=session,
                           json={"challengeId": options["challengeId"], "credential": credential})
    assert_error(r, 400)


# -- sign-in ---------------------------------------------------------------------------------------


def test_sign_in_options_name_no_credential(workspace, origin):
    body = sign_in_options(workspace)
    assert body["challengeId"] == body["publicKey"]["challenge"]
    assert body["publicKey"]["rpId"] == urlsplit(origin).hostname
    assert body["publicKey"].get("allowCredentials", []) == []
    assert_error(workspace.api.post(f"/workspaces/{unique_slug()}/sign-in/passkey/options", json={}), 404)
    assert_error(workspace.api.post(f"{workspace.path}/sign-in/passkey/options", json={"origin": "https://evil.example"}), 400)


def test_a_sign_in_challenge_works_once(workspace, origin):
    session = join(workspace, email())
    authenticator = Authenticator()
    register(workspace, session, authenticator, origin)
    options = sign_in_options(workspace)
    assert sign_in(workspace, authenticator, origin, options).status_code == 201
    assert "challenge" in assert_error(sign_in(workspace, authenticator, origin, options), 400)


def test_an_answer_from_another_origin_is_refused_and_spends_the_challenge(workspace, origin):
    session = join(workspace, email())
    authenticator = Authenticator()
    register(workspace, session, authenticator, origin)
    options = sign_in_options(workspace)
    assert "origin" in assert_error(sign_in(workspace, authenticator, "https://evil.example", options), 400)
    assert "challenge" in assert_error(sign_in(workspace, authenticator, origin, options), 400)
    # Signed for another relying party (the site a phisher runs) it is refused too.
    assert "RP ID" in assert_error(sign_in(workspace, authenticator, origin, rp_id="evil.example"), 400)
    assert sign_in(workspace, authenticator, origin).status_code == 201


def test_a_passkey_of_one_workspace_signs_nobody_in_on_another(workspace, other_workspace, origin):
    session = join(workspace, email())
    authenticator = Authenticator()
    register(workspace, session, authenticator, origin)
    r = sign_in(other_workspace, authenticator, origin)
    assert "not registered on this workspace" in assert_error(r, 400)
    # The other workspace's challenge is no good on the first either.
    assert "challenge" in assert_error(sign_in(workspace, authenticator, origin, sign_in_options(other_workspace)), 400)
    assert sign_in(workspace, authenticator, origin).status_code == 201


def test_a_sign_count_that_went_backwards_is_refused(workspace, origin):
    session = join(workspace, email())
    authenticator = Authenticator(sign_count=10)
    register(workspace, session, authenticator, origin)
    assert sign_in(workspace, authenticator, origin).status_code == 201  # 11
    authenticator.sign_count = 5  # a clone of the authenticator, or a replayed answer
    assert "sign count" in assert_error(sign_in(workspace, authenticator, origin), 400)
    assert_error(sign_in(workspace, authenticator, origin), 400)  # 7: still behind 11
    authenticator.sign_count = 20
    assert sign_in(workspace, authenticator, origin).status_code == 201


def test_an_end_user_signs_in_with_a_passkey_only_where_the_workspace_offers_it(workspace, origin):
    session = end_user(workspace, email())
    authenticator = Authenticator()
    register(workspace, session, authenticator, origin)
    r = sign_in(workspace, authenticator, origin)
    assert r.status_code == 201, r.text
    assert r.json()["role"] is None, "an end user's session"

    r = workspace.api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key, json={"endUserMethods": ["email"]})
    assert r.status_code == 200, r.text
    assert "passkey" in assert_error(sign_in(workspace, authenticator, origin), 403)
    assert_error(workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session), 403)

    # A team member signs in with a passkey whatever the end users are offered.
    member = Authenticator()
    register(workspace, join(workspace, email()), member, origin)
    assert sign_in(workspace, member, origin).status_code == 201


def test_an_sso_token_of_an_owners_address_never_makes_a_team_passkey(workspace, origin):
    """A customer's app that vouches for an owner's address (it let a user set that email
    unverified) gets an end user's session, and a passkey registered from it signs in as an end
    user only, whatever team the person is on."""
    owner = email()
    join(workspace, owner, "owner")
    session = end_user(workspace, owner)
    r = workspace.api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key, json={"endUserMethods": ["email"]})
    assert r.status_code == 200, r.text
    # Passkeys are not offered to end users here: the owner's membership does not open registration.
    assert_error(workspace.api.post(f"{workspace.path}/passkeys/registration-options", key=session), 403)
    r = workspace.api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key, json={"endUserMethods": ["email", "passkey"]})
    assert r.status_code == 200, r.text
    authenticator = Authenticator()
    register(workspace, session, authenticator, origin)
    r = sign_in(workspace, authenticator, origin)
    assert r.status_code == 201, r.text
    assert r.json()["role"] is None, "an end user's passkey opens an end user's session"
    assert_error(workspace.api.get(f"{workspace.path}/settings", key=r.json()["token"]), 403)
    assert_error(workspace.api.patch("/me", key=r.json()["token"], json={"name": "Not proven"}), 403)
    r = workspace.api.patch(f"{workspace.path}/sign-in-settings", key=workspace.key, json={"endUserMethods": ["email"]})
    assert "passkey" in assert_error(sign_in(workspace, authenticator, origin), 403)


def test_an_answer_for_another_person_is_refused(workspace, origin):
    first, second = Authenticator(), Authenticator()
    register(workspace, join(workspace, email()), first, origin)
    register(workspace, join(workspace, email()), second, origin)
    first.user_handle = second.user_handle  # the first passkey claims the second person
    assert "another person" in assert_error(sign_in(workspace, first, origin), 400)


def test_a_malformed_sign_in_is_a_400(workspace, origin):
    options = sign_in_options(workspace)
    for credential in (None, {}, {"id": "A", "rawId": "A", "type": "public-key",
                                  "response": {"clientDataJSON": "A", "authenticatorData": "A", "signature": "A"}}):
        r = workspace.api.post(f"{workspace.path}/sign-in/passkey",
                               json={"challengeId": options["challengeId"], "credential": credential})
        assert_error(r, 400)


# -- listing and removal ---------------------------------------------------------------------------


def test_a_person_lists_and_removes_only_their_own_passkeys(workspace, origin):
    session, other = join(workspace, email()), join(workspace, email())
    authenticator = Authenticator()
    mine = register(workspace, session, authenticator, origin, name="Phone")
    theirs = register(workspace, other, Authenticator(), origin)
    assert theirs["name"] == "Passkey", "the default name"
    assert [p["id"] for p in workspace.api.get(f"{workspace.path}/passkeys", key=session).json()["items"]] == [mine["id"]]

    assert_error(workspace.api.delete(f"{workspace.path}/passkeys/{mine['id']}", key=other), 404)
    assert_error(workspace.api.delete(f"{workspace.path}/passkeys/not-an-id", key=session), 404)
    assert_error(workspace.api.delete(f"{workspace.path}/passkeys/{mine['id']}"), 401)
    assert_error(workspace.api.delete(f"{workspace.path}/passkeys/{mine['id']}", key=workspace.key), 403)
    r = workspace.api.delete(f"{workspace.path}/passkeys/{mine['id']}", key=session)
    assert r.status_code == 204, r.text
    assert workspace.api.get(f"{workspace.path}/passkeys", key=session).json() == {"items": []}
    assert_error(workspace.api.delete(f"{workspace.path}/passkeys/{mine['id']}", key=session), 404)
    assert "not registered" in assert_error(sign_in(workspace, authenticator, origin), 400)
    assert "passkey.removed" in audit_types(workspace)
