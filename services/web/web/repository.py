"""Every database command of the web service: its sessions, their credentials sealed."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

from common.db import Store, new_document
from web import sealing
from web.models import Session


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def _binding(kind: str, workspace: str) -> str:
    return f"{kind}:{workspace}"


class SessionRepository:
    def __init__(self, store: Store):
        self.store = store
        self.sessions = store.collection(Session)

    def create(self, sid: str, kind: str, workspace: str, credential: str, csrf: str, seconds: int,
               grant_id: str | None = None) -> None:
        now = datetime.now(timezone.utc)
        doc = new_document(
            Session, sid=_digest(sid), kind=kind, workspace=workspace,
            sealedCredential=sealing.seal(sid, credential, _binding(kind, workspace)), grantId=grant_id,
            csrf=csrf, createdAt=now, expiresAt=now + timedelta(seconds=seconds),
        )
        self.sessions.insert_one(doc)

    def find(self, sid: str) -> dict | None:
        """The live session of this cookie id, its credential unsealed (under ``credential``)."""
        doc = self.sessions.find_one({"sid": _digest(sid)})
        if doc is None:
            return None
        expires = doc["expiresAt"]
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=timezone.utc)
        if expires <= datetime.now(timezone.utc):
            return None  # the TTL monitor removes it soon; it is over already
        credential = sealing.unseal(sid, doc.get("sealedCredential", ""), _binding(doc["kind"], doc["workspace"]))
        if credential is None:
            return None  # edited in the database, or from before credentials were sealed
        return {**doc, "credential": credential}

    def delete(self, sid: str) -> None:
        self.sessions.delete_one({"sid": _digest(sid)})

    def drop_unsealed(self) -> int:
        """Delete sessions stored before credentials were sealed: they hold a key in clear."""
        return self.sessions.delete_many({"sealedCredential": {"$exists": False}}).deleted_count
