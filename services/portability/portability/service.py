"""The portability service's rules: who may export a workspace (its managers, or the
operator), and what each route answers. Every permission check happens here, once. The
export itself runs in the worker (``exporter.py``)."""

from __future__ import annotations

import re

from bson import ObjectId

from common import auth
from common.directory import Workspaces
from common.errors import Conflict, NotFound
from common.ids import now

from portability import contract, shapes
from portability.repository import ExportRepository

# What a workspace slug can look like: anything else is not a workspace (404) without asking.
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
LISTED = 50  # exports a list shows: the kept ones (PORTABILITY_KEEP) and any unfinished


class ExportService:
    def __init__(self, repo: ExportRepository, workspaces: Workspaces):
        self.repo = repo
        self.workspaces = workspaces

    def _require_manager(self, caller: auth.Caller, slug: str) -> None:
        """Managers of ``slug`` or the operator (401/403), of a workspace that exists (404)."""
        if not SLUG.match(slug):
            auth.require_manager(caller, slug)  # who first, even for a name no workspace has
            raise NotFound(f"workspace '{slug}' not found")
        self.workspaces.require_manager(caller, slug)

    def start(self, caller: auth.Caller, slug: str) -> dict:
        """Queue an export of the workspace; the worker takes it at once. Another one running
        does not stop it: each is a snapshot of its own."""
        self._require_manager(caller, slug)
        return shapes.export(self.repo.create(slug, auth.actor(caller), now()))

    def list(self, caller: auth.Caller, slug: str) -> dict:
        self._require_manager(caller, slug)
        return {"items": [shapes.export(doc) for doc in self.repo.newest(slug, LISTED)]}

    def get(self, caller: auth.Caller, slug: str, export_id: str) -> dict:
        self._require_manager(caller, slug)
        return shapes.export(self._export(slug, export_id))

    def download(self, caller: auth.Caller, slug: str, export_id: str):
        """The export's zip as ``(filename, stream)``; 409 until it has succeeded."""
        self._require_manager(caller, slug)
        doc = self._export(slug, export_id)
        if doc.get("erasedAt"):
            raise Conflict(f"export {export_id}'s file was deleted when a person it named was erased (docs/privacy.md): "
                           "make a new export")
        if doc["status"] != contract.SUCCEEDED or not doc.get("fileId"):
            raise Conflict(f"export {export_id} is {doc['status']}: its file is there once it has succeeded")
        return doc["filename"], self.repo.open_file(doc["fileId"])

    def _export(self, slug: str, export_id: str) -> dict:
        doc = self.repo.find(slug, ObjectId(export_id)) if ObjectId.is_valid(export_id) else None
        if doc is None:
            raise NotFound(f"export {export_id!r} not found")
        return doc
