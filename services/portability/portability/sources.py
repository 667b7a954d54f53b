"""Reading a workspace's data from the services that own it: ``POST /internal/<service>/export``
with ``{workspace, kind, after, limit}``, answered ``{items, next}`` a page at a time (each owner
pages by id, so neither side holds more than a page)."""

from __future__ import annotations

from typing import Callable, Iterator

from common.directory import Owner
from common.internal import InternalClient

PERSON_PREFIX = "person:"


class Sources:
    def __init__(self, client: InternalClient, page_size: int):
        self.client = client
        self.page_size = page_size

    def here(self, service: str) -> bool:
        """Whether this deployment runs ``service`` (a chart may leave one out)."""
        return Owner(self.client, service).here()

    def pages(self, service: str, workspace: str, kind: str, on_page: Callable[[], None] = lambda: None) -> Iterator[list[dict]]:
        """Every page of ``kind`` of ``workspace`` from ``service`` (``on_page`` after each: the
        export renews its lease there)."""
        owner = Owner(self.client, service)
        after = None
        while True:
            body = owner.ask("POST", f"/internal/{service}/export",
                             {"workspace": workspace, "kind": kind, "after": after, "limit": self.page_size},
                             what=f"export the {kind} of '{workspace}'")
            yield body["items"]
            on_page()
            after = body.get("next")
            if not after:
                return

    def persons(self, workspace: str, person_ids: list[str]) -> list[dict]:
        """The people of these ids (raw ObjectIds, as ``person:<id>`` names them), in batches."""
        owner = Owner(self.client, "people")
        found: list[dict] = []
        for start in range(0, len(person_ids), 1000):
            body = owner.ask("POST", "/internal/people/export",
                             {"workspace": workspace, "kind": "people", "ids": person_ids[start:start + 1000]},
                             what=f"export the people of '{workspace}'")
            found.extend(body["items"])
        return found


def person_id(user_id: str | None) -> str | None:
    """The person's id in ``person:<id>`` (None for SSO users, keys, anonymous visitors)."""
    if user_id and user_id.startswith(PERSON_PREFIX):
        value = user_id[len(PERSON_PREFIX):]
        if len(value) == 24 and all(c in "0123456789abcdef" for c in value):
            return value
    return None
