"""Every database command of the web service: its sessions."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

from common.db import Store, new_document
from web.models import Session


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


class SessionRepository:
    def __init__(self, store: Store):
        self.store = store
        self.sessions = Session._get_collection()

    def create(self, sid: str, kind: str, workspace: str, credential: str, csrf: str, seconds: int) -> None:
        now = datetime.now(timezone.utc)
        doc = new_document(
            Session, sid=_digest(sid), kind=kind, workspace=workspace, credential=credential, csrf=csrf,
            createdAt=now, expiresAt=now + timedelta(seconds=seconds),
        )
        self.sessions.insert_one(doc)

    def find(self, sid: str) -> dict | None:
        doc = self.sessions.find_one({"sid": _digest(sid)})
        if doc is None:
            return None
        expires = doc["expiresAt"]
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=timezone.utc)
        if expires <= datetime.now(timezone.utc):
            return None  # the TTL monitor removes it soon; it is over already
        return doc

    def delete(self, sid: str) -> None:
        self.sessions.delete_one({"sid": _digest(sid)})
