"""Who persons are, for services that do not own them: the people service owns addresses and
answers over signed internal HTTP (docs/services/people.md, "Internal")."""

from __future__ import annotations

from urllib.parse import quote

from common import auth
from common.errors import BadRequest, Unavailable
from common.internal import InternalClient

OWNER = "people"
LOOKUP_BATCH = 1000  # persons the people service looks up at once (its maximum)


class PersonDirectory:
    def __init__(self, client: InternalClient):
        self.client = client

    def _ask(self, path: str, payload: dict) -> tuple[int, object]:
        if not self.client.settings.service_url(OWNER):
            raise Unavailable("no people service in this deployment")
        return self.client.json(OWNER, "POST", path, payload)

    def user_of(self, email: str) -> str:
        """The user id (``person:<id>``) of the person of ``email``, made if nobody signed in
        with it yet; 400 for what is not an address."""
        status, body = self._ask("/internal/people/resolve", {"email": email})
        if status == 400:
            raise BadRequest(body.get("error") if isinstance(body, dict) else "field 'email' is not an email address")
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot look the address up now: the people service answered {status}")
        return f"{auth.PERSON_PREFIX}{body['id']}"

    def persons(self, user_ids: list[str]) -> dict[str, dict]:
        """``{person:<id>: {id, email, name}}`` of the persons among ``user_ids`` who exist."""
        raw = sorted({u[len(auth.PERSON_PREFIX):] for u in user_ids if u.startswith(auth.PERSON_PREFIX)})
        found: dict[str, dict] = {}
        for start in range(0, len(raw), LOOKUP_BATCH):
            status, body = self._ask("/internal/people/lookup", {"ids": raw[start:start + LOOKUP_BATCH]})
            if status != 200 or not isinstance(body, dict):
                raise Unavailable(f"cannot look persons up now: the people service answered {status}")
            found.update({f"{auth.PERSON_PREFIX}{p['id']}": p for p in body["items"]})
        return found

    def team(self, slug: str) -> list[dict]:
        """The members of ``slug``'s team: ``{id: person:<id>, email, name, role}`` each."""
        if not self.client.settings.service_url(OWNER):
            raise Unavailable("no people service in this deployment")
        status, body = self.client.json(OWNER, "GET", f"/internal/workspaces/{quote(slug)}/team")
        if status != 200 or not isinstance(body, dict):
            raise Unavailable(f"cannot read the team of '{slug}' now: the people service answered {status}")
        return [{**m, "id": f"{auth.PERSON_PREFIX}{m['id']}"} for m in body["items"]]
