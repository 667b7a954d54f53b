"""Writing what an import brings (internal: the portability service asks, a batch at a time):
boards and statuses (configuration: the workspace's snapshot event goes out as after any change
of them, so the posts service knows them), changelog entries (keyed by ``importKey``:
``<workspace>/<source>:<its id there>``; no changelog.published event, so nobody is mailed of
an entry from the past) and, from our own export, the settings that are not secret."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from pymongo.errors import DuplicateKeyError

from common.ids import new_id, now
from common.errors import BadRequest
from common.validation import check
from workspaces import schemas

NEUTRAL = "#94a3b8"  # an imported status of no known kind: a grey the team recolours


def slugify(text: str, most: int = 48) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:most].strip("-") or "imported"


def parse_time(value) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return (parsed.astimezone(timezone.utc) if parsed.tzinfo else parsed).replace(tzinfo=None)


class Imports:
    def __init__(self, service):
        self.service = service
        self.repo = service.repo

    def run(self, body) -> dict:
        fields = check(body, schemas.IMPORT)
        slug, source, kind, items = fields["workspace"], fields["source"], fields["kind"], fields["items"]
        self.service._workspace(slug)
        if kind == "changelogs":
            return self._changelogs(slug, source, items)
        if kind == "settings":
            return self._settings(slug, items)
        return self._configuration(slug, kind, items)

    # What an import may set of the settings: each but the SSO secret (an export never holds it)
    # and whether tokens must name the workspace (it goes with the secret).
    SETTINGS = ("primaryColor", "theme", "hidePoweredBy", "anonSubmit", "anonVote", "anonComment", "authorVotes",
                "hideCustomerNames", "erasedUserContent", "brandVoice", "widgetOrigins", "widgetPosition", "widgetLabel",
                "defaultLocale", "locales")

    def _settings(self, slug: str, items: list[dict]) -> dict:
        """Each item (our export's settings.json) sets what it names of SETTINGS; the workspace's
        snapshot goes out as after any change (the posts service reads authorVotes there)."""
        ids, errors = {}, []
        for item in items:
            try:
                wanted = check({k: v for k, v in item.items() if k in self.SETTINGS}, schemas.SETTINGS)
                if wanted:
                    self.service._change(slug, lambda tx, wanted=wanted: tx.change_settings(slug, dict(wanted)))
                ids[str(item["sourceId"])] = slug
            except (KeyError, TypeError, ValueError, BadRequest) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        return {"ids": ids, "errors": errors}

    def _configuration(self, slug: str, kind: str, items: list[dict]) -> dict:
        """Boards or statuses the workspace lacks added (by slug: one it has is the same one),
        with the workspace's snapshot event; each item's id here. A status item with
        ``replace`` (our own export's) sets the name, colour and flags of the one it has too."""
        ids, errors = {}, []
        doc = self.service._workspace(slug)
        current = list(doc.get(kind, []))
        by_slug = {c["slug"]: c for c in current}
        replaced = False
        for item in items:
            try:
                wanted = slugify(str(item.get("slug") or item["name"]))
                found = by_slug.get(wanted)
                name = str(item["name"]).strip()[:100 if kind == "boards" else 50] or wanted
                color = item.get("color") if re.fullmatch(schemas.COLOR, str(item.get("color") or "")) else NEUTRAL
                if found is None:
                    if kind == "boards":
                        found = self.repo.new_board(id=new_id(), slug=wanted, name=name,
                                                    description=str(item.get("description") or "")[:500],
                                                    createdAt=parse_time(item.get("createdAt")) or now())
                    else:
                        found = self.repo.new_status(slug=wanted, name=name, color=color, roadmap=bool(item.get("roadmap", True)),
                                                     closed=bool(item.get("closed", False)))
                    current.append(found)
                    by_slug[wanted] = found
                elif kind == "statuses" and item.get("replace"):
                    same = self.repo.new_status(slug=wanted, name=name, color=color, roadmap=bool(item.get("roadmap", True)),
                                                closed=bool(item.get("closed", False)))
                    if any(found.get(k) != same.get(k) for k in ("name", "color", "roadmap", "closed")):
                        current[current.index(found)] = by_slug[wanted] = same
                        replaced = True
                    found = same
                ids[str(item["sourceId"])] = found["id"] if kind == "boards" else found["slug"]
            except (KeyError, TypeError, ValueError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        if replaced or len(current) != len(doc.get(kind, [])):
            version = doc["version"]
            self.service._change(slug, lambda tx: (tx.replace_boards if kind == "boards" else tx.replace_statuses)(slug, current, version),
                                 RuntimeError(f"the {kind} of '{slug}' changed meanwhile; the import runs again"))
        return {"ids": ids, "errors": errors}

    def _changelogs(self, slug: str, source: str, items: list[dict]) -> dict:
        ids, errors = {}, []
        for item in items:
            try:
                key = f"{slug}/{source}:{item['sourceId']}"
                title = str(item["title"]).strip()[:200]
                if not title:
                    raise ValueError("the entry has no title")
                values = {"workspace": slug, "title": title, "content": str(item.get("content") or title),
                          "postIds": [str(p) for p in item.get("postIds") or []],
                          "publishedAt": parse_time(item.get("publishedAt")),
                          "createdAt": parse_time(item.get("createdAt")) or now(), "importKey": key}
                existing = self.repo.changelogs.find_one({"importKey": key}, projection={"_id": 1, "slug": 1})
                if existing is not None:
                    self.repo.changelogs.update_one({"_id": existing["_id"]}, {"$set": values})
                    ids[str(item["sourceId"])] = str(existing["_id"])
                    continue
                doc = self.repo.new_changelog(slug=slugify(str(item.get("slug") or title), 90), **values)
                try:
                    self.repo.changelogs.insert_one(doc)
                except DuplicateKeyError:  # an entry of that slug exists: this one's id tells them apart
                    doc = {**doc, "slug": f"{slugify(title, 80)}-{slugify(str(item['sourceId']), 19)}"}
                    self.repo.changelogs.insert_one(doc)
                ids[str(item["sourceId"])] = str(doc["_id"])
            except (KeyError, TypeError, ValueError, DuplicateKeyError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        return {"ids": ids, "errors": errors}
