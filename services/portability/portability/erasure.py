"""A person erased (``person.erased``, people.privacy): the exports the platform still keeps
that hold them are deleted (docs/privacy.md).

An export is a zip the team downloads; it cannot be edited in place, and it is the team's copy
of a moment. So an export that names the erased person (their address in ``people.jsonl``,
found by the event's keyed digest, or their id in any of its files) loses its file: its job
stays listed, marked erased, and the team makes a new export when it needs one. Imports keep no
file once they end (portability.imports)."""

from __future__ import annotations

import json
import logging
import zipfile

from common.addresses import address_digest

from portability.repository import ExportRepository

log = logging.getLogger(__name__)

CHUNK = 1 << 20


class Erasure:
    def __init__(self, repo: ExportRepository, secret: str):
        self.repo = repo
        self.secret = secret

    def erase(self, data: dict) -> int:
        """Delete the file of every kept export (of ``data["workspace"]``, or of all) naming the
        erased user; how many."""
        user, digest = data["userId"], data.get("addressDigest")
        erased = 0
        for export in self.repo.kept_files(data.get("workspace")):
            if self._names(export["fileId"], user, digest):
                self.repo.erase_file(export)
                erased += 1
        if erased:
            log.info("erased %s from %d kept exports", user, erased)
        return erased

    def _names(self, file_id, user: str, digest: str | None) -> bool:
        needle = json.dumps(user).encode()  # as every file of the zip spells an id: "person:..."
        with zipfile.ZipFile(self.repo.open_file(file_id)) as archive:
            for member in archive.namelist():
                with archive.open(member) as stream:
                    if member == "people.jsonl" and digest:
                        for line in stream:
                            email = json.loads(line).get("email")
                            if email and _digest(self.secret, email) == digest:
                                return True
                        continue
                    tail = b""
                    while chunk := stream.read(CHUNK):
                        if needle in tail + chunk:
                            return True
                        tail = chunk[-len(needle):]
        return False


def _digest(secret: str, address: str) -> str | None:
    try:
        return address_digest(secret, address)
    except ValueError:
        return None
