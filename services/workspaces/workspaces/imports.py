"""Writing what an import brings (internal: the portability service asks, a batch at a time):
boards and statuses (configuration: the workspace's snapshot event goes out as after any change
of them, so the posts service knows them) and changelog entries (keyed by ``importKey``:
``<workspace>/<source>:<its id there>``; no changelog.published event, so nobody is mailed of
an entry from the past)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from pymongo.errors import DuplicateKeyError

from common.ids import new_id, now
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
        return self._configuration(slug, kind, items)

    def _configuration(self, slug: str, kind: str, items: list[dict]) -> dict:
        """Boards or statuses the workspace lacks added (by slug: one it has is the same one),
        with the workspace's snapshot event; each item's id here."""
        ids, errors = {}, []
        doc = self.service._workspace(slug)
        current = list(doc.get(kind, []))
        by_slug = {c["slug"]: c for c in current}
        for item in items:
            try:
                wanted = slugify(str(item.get("slug") or item["name"]))
                found = by_slug.get(wanted)
                if found is None:
                    name = str(item["name"]).strip()[:100 if kind == "boards" else 50] or wanted
                    if kind == "boards":
                        found = self.repo.new_board(id=new_id(), slug=wanted, name=name, description="",
                                                    createdAt=parse_time(item.get("createdAt")) or now())
                    else:
                        color = item.get("color") if re.fullmatch(schemas.COLOR, str(item.get("color") or "")) else NEUTRAL
                        found = self.repo.new_status(slug=wanted, name=name, color=color, roadmap=bool(item.get("roadmap", True)),
                                                     closed=bool(item.get("closed", False)))
                    current.append(found)
                    by_slug[wanted] = found
                ids[str(item["sourceId"])] = found["id"] if kind == "boards" else found["slug"]
            except (KeyError, TypeError, ValueError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        if len(current) != len(doc.get(kind, [])):
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
                doc = self.repo.new_changelog(slug=slugify(title, 90), **values)
                try:
                    self.repo.changelogs.insert_one(doc)
                except DuplicateKeyError:  # an entry of that slug exists: this one's id tells them apart
                    doc = {**doc, "slug": f"{slugify(title, 80)}-{slugify(str(item['sourceId']), 19)}"}
                    self.repo.changelogs.insert_one(doc)
                ids[str(item["sourceId"])] = str(doc["_id"])
            except (KeyError, TypeError, ValueError, DuplicateKeyError) as ex:
                errors.append({"item": str(item.get("sourceId")), "message": str(ex) or ex.__class__.__name__})
        return {"ids": ids, "errors": errors}
