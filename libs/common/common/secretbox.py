"""Secrets the platform must read back (webhook signing secrets, SSO secrets), encrypted at rest.

A dump, a backup or the oplog of a service's database then yields no usable secret without
the keys, which live in configuration only. Secrets the platform never reads back (API keys)
are not here: only their hash is stored.

Keys: ``SECRETS_KEYS``, comma-separated Fernet keys (``Fernet.generate_key()``, 32 url-safe
base64 bytes each). The first encrypts; every one decrypts. Rotation:

1. put a new key first (``SECRETS_KEYS=new,old``) and roll it out to every process;
2. run ``feedback reseal-secrets``: every stored secret is rewritten under the first key;
3. drop the old key.

Without ``SECRETS_KEYS``, a development process uses a built-in key (public, like the other
built-in secrets): one with ``FEEDBACK_DEV=1``, or one left on the built-in
``INTERNAL_SECRET``, which ``feedback serve`` and ``feedback worker`` refuse outside
development, so only contexts built inside a test process get that far. Any other process
refuses to start.

Stored form: ``sealed:v1:`` and a Fernet token. A value without that prefix is a clear-text
secret stored before encryption existed: :meth:`SecretBox.open` returns it as it is, and the
next write or ``feedback reseal-secrets`` seals it.

Which fields are sealed is declared by their model: a mongoengine Document lists the dotted
paths of its sealed fields (through embedded documents and lists) in ``SEALED``, e.g.
``SEALED = ("secrets.key",)``; the reseal command walks every discovered service's models.
"""

from __future__ import annotations

import argparse
import base64
import functools
from typing import Any, Callable, Iterator, Mapping, Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from common.config import Settings, load_settings

PREFIX = "sealed:v1:"
# Public by design: it only ever protects development data.
DEV_KEY = base64.urlsafe_b64encode(b"feedback-development-key-public!").decode()
RESEAL_PASSES = 5  # a document rewritten meanwhile is read again, a few times at most


class UnreadableSecret(RuntimeError):
    """A sealed value no configured key opens: a key left SECRETS_KEYS before its secrets were resealed."""


class SecretBox:
    def __init__(self, keys: Sequence[str], built_in: bool = False):
        if not keys:
            raise ValueError("a secret box needs at least one key")
        fernets = [Fernet(key) for key in keys]
        self._first = fernets[0]
        self._any = MultiFernet(fernets)
        self.built_in = built_in

    @staticmethod
    def is_sealed(stored: str) -> bool:
        return stored.startswith(PREFIX)

    def seal(self, plain: str) -> str:
        return PREFIX + self._first.encrypt(plain.encode()).decode()

    def open(self, stored: str | None) -> str | None:
        """The secret a stored value holds (a clear-text value from before encryption as it is)."""
        if stored is None or not self.is_sealed(stored):
            return stored
        try:
            return self._any.decrypt(stored[len(PREFIX) :].encode()).decode()
        except InvalidToken:
            raise UnreadableSecret(
                "a stored secret cannot be decrypted with any key in SECRETS_KEYS; was a key dropped "
                "before 'feedback reseal-secrets' rewrote its secrets?"
            ) from None

    def is_current(self, stored: str) -> bool:
        """Whether ``stored`` is sealed under the first key (nothing for a reseal pass to do)."""
        if not self.is_sealed(stored):
            return False
        try:
            self._first.decrypt(stored[len(PREFIX) :].encode())
            return True
        except InvalidToken:
            return False

    def reseal(self, stored: str) -> str:
        """``stored`` sealed under the first key (a clear-text value is sealed for the first time)."""
        return self.seal(self.open(stored))


def _fernet_keys(keys: Sequence[str]) -> tuple[str, ...]:
    for position, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            # Not SystemExit with the value: the error must not print the other keys.
            raise SystemExit(
                f"environment variable SECRETS_KEYS is invalid: key {position} is not a Fernet key "
                "(32 url-safe base64-encoded bytes, e.g. from Fernet.generate_key())"
            ) from None
    return tuple(keys)


def load_box(environ: Mapping[str, str] | None = None) -> SecretBox:
    """The box ``SECRETS_KEYS`` configures; see the module's docstring for development."""
    settings = load_settings(environ)
    keys = _fernet_keys(settings.secrets_keys)
    if keys:
        return SecretBox(keys)
    if settings.dev_mode or settings.internal_secret == Settings.internal_secret:
        return SecretBox((DEV_KEY,), built_in=True)
    raise SystemExit(
        "refusing to start: SECRETS_KEYS is unset, and this process stores secrets it must read back "
        "(webhook signing secrets, SSO secrets); set it to a key from Fernet.generate_key(), "
        "or FEEDBACK_DEV=1 on a development machine"
    )


@functools.cache
def default_box() -> SecretBox:
    """The process's box, read once from the environment."""
    return load_box()


# -- resealing every stored secret under the first key ------------------------------------------


def _map_path(value: Any, parts: Sequence[str], change: Callable[[Any], Any]) -> Any:
    """``value`` with ``change`` applied at the dotted path ``parts``, through dicts and lists."""
    if isinstance(value, list):
        return [_map_path(item, parts, change) for item in value]
    if not parts:
        return change(value)
    if not isinstance(value, dict) or parts[0] not in value:
        return value
    return {**value, parts[0]: _map_path(value[parts[0]], parts[1:], change)}


def reseal_collection(collection, paths: Sequence[str], box: SecretBox) -> int:
    """Rewrite every value at ``paths`` that is not sealed under the first key; how many
    documents changed. Each write is conditioned on the fields it read, so a secret changed
    meanwhile (written under the first key anyway) is never overwritten with an older one."""

    def current(value):
        return box.reseal(value) if isinstance(value, str) and not box.is_current(value) else value

    tops = sorted({path.split(".", 1)[0] for path in paths})
    rewritten = 0
    for _ in range(RESEAL_PASSES):
        raced = 0
        for doc in collection.find({}, projection=tops):
            new = doc
            for path in paths:
                new = _map_path(new, path.split("."), current)
            changed = {top: new[top] for top in tops if top in doc and new[top] != doc[top]}
            if not changed:
                continue
            guard = {"_id": doc["_id"], **{top: doc[top] for top in changed}}
            if collection.update_one(guard, {"$set": changed}).matched_count:
                rewritten += 1
            else:
                raced += 1
        if not raced:
            break
    return rewritten


def reseal_all(settings: Settings, services: Mapping[str, Any], box: SecretBox) -> Iterator[str]:
    """Reseal the ``SEALED`` fields of every discovered service's models; a line per collection."""
    from common.db import Store

    for name, spec in services.items():
        models = [m for m in spec.model_classes() if getattr(m, "SEALED", ())]
        if not models:
            continue
        store = Store(settings, name)
        try:
            for model in models:
                collection = store.collection(model)
                count = reseal_collection(collection, model.SEALED, box)
                yield f"{name}.{collection.name}: {count} document(s) resealed under the first key"
        finally:
            store.close()


def reseal_command(argv: list[str]) -> None:
    """``feedback reseal-secrets``: step 2 of a key rotation (see the module's docstring)."""
    from common.plugins import load_services

    argparse.ArgumentParser(
        prog="feedback reseal-secrets",
        description="Rewrite every stored secret under the first key of SECRETS_KEYS (run after "
        "putting a new key first; drop the old key afterwards). Safe to run again.",
    ).parse_args(argv)
    settings = load_settings()
    settings.require_secrets()
    box = load_box()
    for line in reseal_all(settings, load_services(), box):
        print(line)
