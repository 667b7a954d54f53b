"""Response shapes of the people service, as the OpenAPI document names them."""

from common.ids import iso


def person(doc: dict) -> dict:
    return {"id": str(doc["_id"]), "email": doc["email"], "name": doc["name"], "avatarUrl": doc.get("avatarUrl"),
            "locale": doc.get("locale")}


def exported_person(doc: dict, role: str | None) -> dict:
    """A person as a workspace's export carries them: who they are (``userId`` as posts and
    votes name them), their role if a member, nothing of how they sign in."""
    return {**person(doc), "userId": f"person:{doc['_id']}", "role": role, "createdAt": iso(doc["createdAt"])}


def member(membership: dict, person_doc: dict) -> dict:
    return {**person(person_doc), "role": membership["role"], "joinedAt": iso(membership["joinedAt"])}


def invitation(doc: dict) -> dict:
    return {
        "id": str(doc["_id"]), "email": doc["email"], "role": doc["role"], "invitedBy": doc.get("invitedBy"),
        "createdAt": iso(doc["createdAt"]), "expiresAt": iso(doc["expiresAt"]), "acceptedAt": iso(doc.get("acceptedAt")),
    }


def session(token: str, doc: dict) -> dict:
    """A new session, with its token: shown once, to whoever signed in."""
    return {
        "token": token, "workspace": doc["workspace"], "expiresAt": iso(doc["expiresAt"]), "role": doc.get("role"),
        "user": {"id": doc["userId"], "name": doc.get("name"), "email": doc.get("email"), "avatarUrl": doc.get("avatarUrl")},
    }


def audit_entry(doc: dict) -> dict:
    return {"id": str(doc["_id"]), "type": doc["type"], "actor": doc.get("actor"), "data": doc.get("data") or {},
            "at": iso(doc["at"])}


def sign_in_settings(slug: str, doc: dict | None, default_methods, oidc: dict | None = None) -> dict:
    """``oidc``: the workspace's OpenID Connect button ({name}), or None without a provider."""
    methods = doc.get("endUserMethods") if doc else None
    return {"workspace": slug, "endUserMethods": list(default_methods if methods is None else methods), "oidc": oidc}
