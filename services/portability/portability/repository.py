"""Every database command of the portability service: export jobs, their claims, and the zips
kept in GridFS. A new export and its ``export.created`` event commit together (the outbox); every
other change is one conditional write."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import BinaryIO

import gridfs
from bson import ObjectId
from common.db import Insert, Store, new_document
from common.ids import now
from common.repository import Repository
from pymongo import ReturnDocument

from portability import contract
from portability.models import BUCKET, Export
from portability.worker import JOB_QUEUED


class ExportRepository(Repository):
    def __init__(self, store: Store):
        super().__init__(store, contract.TOPIC, contract.EVENTS)
        self.exports = store.collection(Export)
        self.files = gridfs.GridFSBucket(store.db, bucket_name=BUCKET)

    # -- jobs ------------------------------------------------------------------------------

    def create(self, workspace: str, requested_by: dict | None, at: datetime) -> dict:
        doc = new_document(Export, id=ObjectId(), workspace=workspace, status=contract.QUEUED,
                           progress={"done": 0, "total": contract.TOTAL_STEPS}, counts={}, errors=[],
                           requestedBy=requested_by, createdAt=at)
        event = {"exportId": str(doc["_id"]), "actor": requested_by}
        self.unit_of_work(lambda tx: tx.add(Insert(tx.exports, doc), tx.event(workspace, contract.EXPORT_CREATED, event)))
        JOB_QUEUED.set()
        return doc

    def find(self, workspace: str, export_id: ObjectId) -> dict | None:
        return self.exports.find_one({"_id": export_id, "workspace": workspace})

    def newest(self, workspace: str, limit: int) -> list[dict]:
        return list(self.exports.find({"workspace": workspace}, sort=[("createdAt", -1), ("_id", -1)], limit=limit))

    # -- the worker's claims -----------------------------------------------------------------

    def claim(self, token: str, at: datetime, lease: float) -> dict | None:
        """Claim the oldest export waiting, or running under a lease that ended (its worker
        died): it starts again from the beginning under ``token``."""
        return self.exports.find_one_and_update(
            {"status": {"$in": list(contract.UNFINISHED)}, "$or": [{"leaseUntil": None}, {"leaseUntil": {"$lt": at}}]},
            {"$set": {"status": contract.RUNNING, "claim": token, "leaseUntil": at + timedelta(seconds=lease),
                      "startedAt": at, "counts": {}, "errors": [], "progress": {"done": 0, "total": contract.TOTAL_STEPS}},
             "$inc": {"attempts": 1}},
            sort=[("createdAt", 1)], return_document=ReturnDocument.AFTER,
        )

    def advance(self, export_id: ObjectId, token: str, at: datetime, lease: float, fields: dict) -> bool:
        """Record progress (``fields``) and renew the lease; False when the claim was lost (its
        lease ended and another worker took the export over)."""
        done = self.exports.update_one({"_id": export_id, "claim": token},
                                       {"$set": {**fields, "leaseUntil": at + timedelta(seconds=lease)}})
        return done.matched_count == 1

    def finish(self, export_id: ObjectId, token: str, fields: dict) -> bool:
        """Set the export's outcome (``fields``) and end the claim; False when it was lost."""
        done = self.exports.update_one({"_id": export_id, "claim": token},
                                       {"$set": {**fields, "claim": None, "leaseUntil": None}})
        return done.matched_count == 1

    # -- the zips ----------------------------------------------------------------------------

    def store_file(self, filename: str, source: BinaryIO, workspace: str) -> ObjectId:
        return self.files.upload_from_stream(filename, source, metadata={"workspace": workspace})

    def open_file(self, file_id: ObjectId):
        """The stored zip, read as a stream (a ``GridOut``: ``.length``, ``.read(n)``)."""
        return self.files.open_download_stream(file_id)

    def delete_file(self, file_id: ObjectId) -> None:
        try:
            self.files.delete(file_id)
        except gridfs.errors.NoFile:
            pass  # deleted before (an earlier cleanup that stopped half way)

    def kept_files(self, workspace: str | None) -> list[dict]:
        """The exports whose file is still kept (of ``workspace``, or of all)."""
        query = {"fileId": {"$ne": None}, **({"workspace": workspace} if workspace else {})}
        return list(self.exports.find(query, {"fileId": 1, "workspace": 1}))

    def erase_file(self, export: dict) -> None:
        """An export's file deleted for a person's erasure: the job stays, marked so."""
        self.exports.update_one({"_id": export["_id"]}, {"$set": {"fileId": None, "erasedAt": now()}})
        self.delete_file(export["fileId"])

    def finished_beyond(self, workspace: str, keep: int) -> list[dict]:
        """The workspace's finished exports past the newest ``keep``."""
        return list(self.exports.find({"workspace": workspace, "status": {"$in": [contract.SUCCEEDED, contract.FAILED]}},
                                      sort=[("createdAt", -1), ("_id", -1)], skip=keep))

    def remove(self, export_id: ObjectId) -> None:
        self.exports.delete_one({"_id": export_id})
