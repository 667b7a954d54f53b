"""Unsubscribe tokens: who (a person) stops hearing from which workspace, signed so that only
this platform could have made one, and needing no sign-in to use (RFC 8058's one-click).

Signed with a key derived from INTERNAL_SECRET for this purpose alone (itsdangerous' salt), so a
token is worthless for anything else. A token does not expire: a mail read a year later must
still unsubscribe."""

from __future__ import annotations

from itsdangerous import BadSignature, URLSafeSerializer

SALT = "feedback.notifications.unsubscribe"


class UnsubscribeTokens:
    def __init__(self, secret: str):
        self.serializer = URLSafeSerializer(secret, salt=SALT)

    def make(self, slug: str, person_id: str) -> str:
        return self.serializer.dumps([slug, person_id])

    def read(self, token: str) -> tuple[str, str] | None:
        """``(workspace, person id)`` of a token this platform signed; None for any other."""
        try:
            value = self.serializer.loads(token)
        except BadSignature:
            return None
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            return None
        return value[0], value[1]
