"""Imports as jobs: what the API does (who may start one, with what file; the list and the
status), and every database command of import jobs. The file sent is stored in GridFS before
the job is queued; the ``importer`` (run by the same worker as exports) claims it under a lease
like an export, and a run whose worker died is claimed again and run from the start: what it
writes is keyed by the source's ids, so the counts come out as an uninterrupted run's."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import BinaryIO

import gridfs
from bson import ObjectId
from pymongo import ReturnDocument

from common import auth
from common.db import Store, new_document
from common.errors import BadRequest, NotFound, UnsupportedMediaType
from common.ids import iso, now

from portability import contract
from portability.models import IMPORT_BUCKET, Import
from portability.worker import JOB_QUEUED

LISTED = 50  # imports a list shows, newest first


class ImportRepository:
    def __init__(self, store: Store):
        self.imports = store.collection(Import)
        self.files = gridfs.GridFSBucket(store.db, bucket_name=IMPORT_BUCKET)

    def create(self, workspace: str, source: str, options: dict, content_type: str, data: bytes, filename: str | None,
               requested_by: dict | None, at: datetime) -> dict:
        """Keep the file, then queue the job naming it (a job never names a file not there)."""
        job_id = ObjectId()
        file_id = self.files.upload_from_stream(filename or f"import-{job_id}", data,
                                                metadata={"workspace": workspace, "importId": str(job_id)})
        doc = new_document(Import, id=job_id, workspace=workspace, source=source, options=options, status=contract.QUEUED,
                           progress={"done": 0, "total": None}, counts={}, errors=[], errorCount=0, requestedBy=requested_by,
                           fileId=file_id, filename=filename, contentType=content_type, sizeBytes=len(data), createdAt=at)
        self.imports.insert_one(doc)
        JOB_QUEUED.set()
        return doc

    def find(self, workspace: str, import_id: ObjectId) -> dict | None:
        return self.imports.find_one({"_id": import_id, "workspace": workspace})

    def newest(self, workspace: str, limit: int) -> list[dict]:
        return list(self.imports.find({"workspace": workspace}, sort=[("createdAt", -1), ("_id", -1)], limit=limit))

    def claim(self, token: str, at: datetime, lease: float) -> dict | None:
        """The oldest import waiting, or running under a lease that ended: it starts again from
        the beginning under ``token``."""
        return self.imports.find_one_and_update(
            {"status": {"$in": list(contract.UNFINISHED)}, "$or": [{"leaseUntil": None}, {"leaseUntil": {"$lt": at}}]},
            {"$set": {"status": contract.RUNNING, "claim": token, "leaseUntil": at + timedelta(seconds=lease), "startedAt": at,
                      "counts": {}, "errors": [], "errorCount": 0, "progress": {"done": 0, "total": None}},
             "$inc": {"attempts": 1}},
            sort=[("createdAt", 1)], return_document=ReturnDocument.AFTER,
        )

    def advance(self, import_id: ObjectId, token: str, at: datetime, lease: float, fields: dict) -> bool:
        done = self.imports.update_one({"_id": import_id, "claim": token},
                                       {"$set": {**fields, "leaseUntil": at + timedelta(seconds=lease)}})
        return done.matched_count == 1

    def finish(self, import_id: ObjectId, token: str, fields: dict) -> bool:
        done = self.imports.update_one({"_id": import_id, "claim": token}, {"$set": {**fields, "claim": None, "leaseUntil": None}})
        return done.matched_count == 1

    def download(self, file_id: ObjectId, target: BinaryIO) -> None:
        self.files.download_to_stream(file_id, target)

    def drop_file(self, import_id: ObjectId, file_id: ObjectId) -> None:
        """The file of a finished import is not kept (it holds people's addresses)."""
        try:
            self.files.delete(file_id)
        except gridfs.errors.NoFile:
            pass
        self.imports.update_one({"_id": import_id}, {"$set": {"fileId": None}})


def shape(doc: dict) -> dict:
    counts = doc.get("counts") or {}
    return {
        "id": str(doc["_id"]), "workspace": doc["workspace"], "source": doc["source"], "status": doc["status"],
        "progress": {"done": (doc.get("progress") or {}).get("done", 0), "total": (doc.get("progress") or {}).get("total")},
        "counts": {kind: counts.get(kind, 0) for kind in contract.IMPORT_KINDS},
        "errors": list(doc.get("errors", [])), "errorCount": doc.get("errorCount", 0),
        "filename": doc.get("filename"), "sizeBytes": doc.get("sizeBytes", 0),
        "createdAt": iso(doc["createdAt"]), "startedAt": iso(doc.get("startedAt")), "finishedAt": iso(doc.get("finishedAt")),
    }


def csv_options(params: dict) -> dict:
    """The CSV's column mapping from the query: ``preset=ours|fider`` and ``map.<field>=<column>``
    (a field mapped overrides the preset's column for it); 400 for an unknown field or preset."""
    preset = params.get("preset")
    if preset is not None and preset not in contract.CSV_PRESETS:
        raise BadRequest(f"query parameter 'preset' must be one of {', '.join(contract.CSV_PRESETS)}")
    mapping = dict(contract.CSV_PRESETS[preset or "ours"])
    for name, value in params.items():
        if not name.startswith("map."):
            continue
        field = name[4:]
        if field not in contract.CSV_FIELDS:
            raise BadRequest(f"query parameter '{name}': a CSV maps {', '.join(contract.CSV_FIELDS)}")
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            raise BadRequest(f"query parameter '{name}' names a column (1-200 characters)")
        mapping[field] = value.strip()
    return {"preset": preset or "ours", "columns": mapping}


class ImportService:
    def __init__(self, repo: ImportRepository, require_manager):
        self.repo = repo
        self.require_manager = require_manager  # ExportService._require_manager: who first, then which workspace

    def start(self, caller: auth.Caller, slug: str, source: str | None, content_type: str | None, data: bytes,
              params: dict, filename: str | None = None) -> dict:
        self.require_manager(caller, slug)
        if source not in contract.SOURCES:
            raise BadRequest(f"query parameter 'source' must be one of {', '.join(contract.SOURCES)}")
        media = (content_type or "").split(";")[0].strip().lower()
        if media not in contract.IMPORT_CONTENT_TYPES:
            raise UnsupportedMediaType(f"an import is sent as {', '.join(contract.IMPORT_CONTENT_TYPES)}")
        if not data:
            raise BadRequest("the request body is the file to import; it is empty")
        if media == "application/json" and data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"{":
            # Told at once, as any JSON body that is not the object a route takes (the rest of
            # the document is read by the job, as a stream).
            raise BadRequest("the request body must be a JSON object holding Canny's lists (boards, posts, ...)")
        # Our own export's posts.csv needs no mapping: its columns are the ``ours`` preset's.
        options = csv_options(params) if source == "csv" else csv_options({}) if source == "ours" else {}
        return shape(self.repo.create(slug, source, options, media, data, filename, auth.actor(caller), now()))

    def list(self, caller: auth.Caller, slug: str) -> dict:
        self.require_manager(caller, slug)
        return {"items": [shape(doc) for doc in self.repo.newest(slug, LISTED)]}

    def get(self, caller: auth.Caller, slug: str, import_id: str) -> dict:
        self.require_manager(caller, slug)
        doc = self.repo.find(slug, ObjectId(import_id)) if ObjectId.is_valid(import_id) else None
        if doc is None:
            raise NotFound(f"import {import_id!r} not found")
        return shape(doc)
