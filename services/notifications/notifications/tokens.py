"""Unsubscribe tokens: who (a person) stops hearing from which workspace, signed so that only
this platform could have made one, and needing no sign-in to use (RFC 8058's one-click).

Signed with a key derived from INTERNAL_SECRET for this purpose alone (itsdangerous' salt), so a
token is worthless for anything else. A token does not expire: a mail read a year later must
still unsubscribe."""

from __future__ import annotations

from itsdangerous import BadSignature, URLSafeSerializer, URLSafeTimedSerializer

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


CONFIRM_SALT = "feedback.notifications.changelog-confirm"
LEAVE_SALT = "feedback.notifications.changelog-unsubscribe"


class SubscriptionTokens:
    """The links of changelog subscriptions, each signed for its purpose alone (its own salt):
    a confirmation link (workspace, address, the subscription's nonce) that expires, so a mail
    found a month later confirms nothing; and an unsubscribe link (workspace, address) that does
    not, like the notifications' own."""

    def __init__(self, secret: str, confirm_seconds: int):
        self.confirming = URLSafeTimedSerializer(secret, salt=CONFIRM_SALT)
        self.leaving = URLSafeSerializer(secret, salt=LEAVE_SALT)
        self.confirm_seconds = confirm_seconds

    def confirm(self, slug: str, address: str, nonce: str) -> str:
        return self.confirming.dumps([slug, address, nonce])

    def read_confirm(self, token: str) -> tuple[str, str, str] | None:
        """``(workspace, address, nonce)`` of a confirmation token this platform signed and that
        has not expired; None for any other."""
        try:
            value = self.confirming.loads(token, max_age=self.confirm_seconds)
        except BadSignature:  # SignatureExpired is one
            return None
        return tuple(value) if _strings(value, 3) else None

    def unsubscribe(self, slug: str, address: str) -> str:
        return self.leaving.dumps([slug, address])

    def read_unsubscribe(self, token: str) -> tuple[str, str] | None:
        try:
            value = self.leaving.loads(token)
        except BadSignature:
            return None
        return tuple(value) if _strings(value, 2) else None


def _strings(value, count: int) -> bool:
    return isinstance(value, list) and len(value) == count and all(isinstance(v, str) for v in value)
