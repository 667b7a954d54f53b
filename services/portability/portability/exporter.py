"""Running one export: read every kind from its owner a page at a time, write the files, zip
them, keep the zip in GridFS, record the outcome. Run by the worker under a claim
(``ExportRepository.claim``, through ``jobs.Jobs``): each page renews the lease, and a run whose
claim was lost (it stalled past its lease and another worker started the export again) stops
without writing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from common.ids import iso, now

from portability import contract
from portability.archive import Folder
from portability.config import PortabilityConfig
from portability.jobs import Jobs, LostClaim
from portability.repository import ExportRepository
from portability.sources import Sources, person_id


class Exporter(Jobs):
    what = "export"

    def __init__(self, repo: ExportRepository, sources: Sources, config: PortabilityConfig):
        super().__init__(repo, config)
        self.sources = sources

    def fail(self, job: dict, token: str, state, error: dict) -> None:
        self.repo.finish(job["_id"], token, {"status": contract.FAILED, "finishedAt": now(), "errors": [error]})

    def run(self, job: dict, token: str, state=None) -> None:
        workspace = job["workspace"]
        with tempfile.TemporaryDirectory(prefix="export-") as folder_path:
            folder = Folder(Path(folder_path))
            done = 0

            def renew(**fields) -> None:
                if not self.repo.advance(job["_id"], token, now(), self.config.lease_seconds, fields):
                    raise LostClaim()

            boards: dict[str, str] = {}
            statuses: dict[str, str] = {}
            named: set[str] = set()  # person ids posts, votes and comments name
            exported: set[str] = set()  # person ids written to people.jsonl
            errors: list[dict] = []
            for kind, service in contract.STEPS:
                if not self.sources.here(service):
                    # A deployment without this owner (the chart lets one be left out) exports
                    # the rest, and says what is missing.
                    errors.append({"item": kind, "message": f"not exported: this deployment runs no {service} service"})
                    if kind == "settings":
                        folder.json("settings.json", {})
                    else:
                        folder.lines(kind, [])
                elif kind == "settings":
                    settings = next(self.sources.pages(service, workspace, kind))[0]
                    folder.json("settings.json", settings)
                else:
                    folder.lines(kind, [])
                    for items in self.sources.pages(service, workspace, kind, on_page=renew):
                        if kind == "boards":
                            boards.update((b["id"], b["name"]) for b in items)
                        elif kind == "statuses":
                            statuses.update((s["slug"], s["name"]) for s in items)
                        elif kind == "posts":
                            folder.csv_rows(self._csv_rows(workspace, items, boards, statuses))
                        elif kind == "people":
                            exported.update(p["id"] for p in items)
                        if kind in ("posts", "comments"):
                            named.update(filter(None, (person_id(i.get("authorId")) for i in items)))
                        elif kind == "votes":
                            named.update(filter(None, (person_id(i.get("userId")) for i in items)))
                        folder.lines(kind, items)
                    if kind == "people":
                        # People who wrote or voted without ever signing in here (a vote on their
                        # behalf, a company's member named by email): asked for by id.
                        missing = sorted(named - exported)
                        if missing:
                            folder.lines(kind, self.sources.persons(workspace, missing))
                done += 1
                renew(progress={"done": done, "total": contract.TOTAL_STEPS}, counts=dict(folder.counts), errors=errors)
            created = now()
            folder.json("manifest.json", {
                "format": "feedback-export", "formatVersion": contract.FORMAT_VERSION, "workspace": workspace,
                "exportId": str(job["_id"]), "createdAt": iso(created), "counts": dict(folder.counts),
                "files": [*(f"{kind}.jsonl" for kind in contract.COUNTED), "settings.json", "posts.csv"],
            })
            names = ["manifest.json", "settings.json", *(f"{kind}.jsonl" for kind in contract.COUNTED), "posts.csv"]
            zip_path = Path(folder_path) / "export.zip"
            size = folder.zip(names, zip_path)
            filename = f"{workspace}-export-{job['createdAt']:%Y-%m-%d}.zip"
            renew()  # still ours: only then store the file
            with open(zip_path, "rb") as source:
                file_id = self.repo.store_file(filename, source, workspace)
        if not self.repo.finish(job["_id"], token, {
            "status": contract.SUCCEEDED, "finishedAt": now(), "fileId": file_id, "filename": filename, "sizeBytes": size,
            "counts": dict(folder.counts), "errors": errors,
            "progress": {"done": contract.TOTAL_STEPS, "total": contract.TOTAL_STEPS},
        }):
            self.repo.delete_file(file_id)
            raise LostClaim()
        self.prune(workspace)

    def _csv_rows(self, workspace: str, posts: list[dict], boards: dict, statuses: dict) -> list[list]:
        """The spreadsheet's rows of a page of posts; the authors' addresses asked of the people
        service for this page only."""
        ids = sorted({pid for pid in (person_id(p.get("authorId")) for p in posts) if pid})
        people = {p["id"]: p for p in self.sources.persons(workspace, ids)} if ids and self.sources.here("people") else {}
        rows = []
        for post in posts:
            person = people.get(person_id(post.get("authorId")) or "")
            author_name = (person or {}).get("name") or (post.get("author") or {}).get("name") or ""
            rows.append([post["id"], post["title"], post.get("content", ""), boards.get(post["boardId"], post["boardId"]),
                         statuses.get(post["status"], post["status"]), (person or {}).get("email", ""), author_name,
                         post.get("voteCount", 0), post["createdAt"], ",".join(post.get("tags", [])), post.get("eta") or ""])
        return rows

    def prune(self, workspace: str) -> None:
        """Delete the workspace's finished exports past the newest ``keep`` (and their zips)."""
        for old in self.repo.finished_beyond(workspace, self.config.keep):
            if old.get("fileId"):
                self.repo.delete_file(old["fileId"])
            self.repo.remove(old["_id"])
