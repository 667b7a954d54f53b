"""Reading an import's file as a stream of items, whatever its size: a Canny JSON document with
``ijson`` (one list at a time, never the whole document), a zip of Canny's JSON lists member by
member, our own export's JSON Lines line by line, a CSV row by row. Nothing here holds more
than one item; the file is on local disk (copied from GridFS) so each list is read by its own
pass."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import Iterator

import ijson

from portability.contract import FORMAT_VERSION
from portability.jobs import JobFailed

# The lists of a Canny export (each the array Canny's API list endpoint answers), by our kind.
CANNY_LISTS = ("boards", "categories", "tags", "users", "companies", "posts", "votes", "comments", "entries")


class UnreadableFile(JobFailed):
    """The file is not what its import says it is (not JSON, not a zip, not CSV): the job fails,
    naming the file."""


class CannyFile:
    """A Canny export: one JSON object holding the lists, or a zip of JSON files, each a list or
    an object holding it (``posts.json`` as ``[...]`` or ``{"posts": [...], "hasMore": false}``)."""

    def __init__(self, path: Path, content_type: str):
        self.path = path
        if content_type == "text/csv":
            raise UnreadableFile("a Canny import is a JSON document or a zip of JSON files, not CSV")
        self.zipped = content_type == "application/zip"
        if self.zipped and not zipfile.is_zipfile(path):
            raise UnreadableFile("the file is not a zip archive (sent as application/zip)")

    def items(self, name: str) -> Iterator[dict]:
        """Every item of the list ``name`` (one of CANNY_LISTS), streamed; none if absent."""
        try:
            if not self.zipped:
                with open(self.path, "rb") as source:
                    if _first_byte(source) != b"{":
                        raise UnreadableFile("the file is not a JSON object holding Canny's lists (boards, posts, ...)")
                    yield from ijson.items(source, f"{name}.item", use_float=True)
                return
            with zipfile.ZipFile(self.path) as archive:
                for member in archive.namelist():
                    stem = Path(member).name.rsplit(".", 1)[0].lower()
                    if stem != name or member.endswith("/"):
                        continue
                    with archive.open(member) as raw:
                        source = io.BufferedReader(raw)
                        first = _first_byte(source)
                        prefix = "item" if first == b"[" else f"{name}.item"
                        yield from ijson.items(source, prefix, use_float=True)
        except ijson.JSONError as ex:
            raise UnreadableFile(f"the file is not valid JSON ({name}: {ex})") from None
        except zipfile.BadZipFile as ex:
            raise UnreadableFile(f"the zip archive cannot be read: {ex}") from None


def _first_byte(source) -> bytes:
    """The first byte that is not white space (a BOM skipped), the stream left at the start."""
    head = source.peek(64)[:64] if hasattr(source, "peek") else b""
    if not head:
        head = source.read(64)
        source.seek(0)
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]


def csv_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, {column: value})`` of each row after the header (line 1), streamed."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as source:
            reader = csv.DictReader(source)
            if not reader.fieldnames or len(reader.fieldnames) < 1:
                raise UnreadableFile("the CSV file has no header row")
            for row in reader:
                yield reader.line_num, row
    except UnicodeDecodeError:
        raise UnreadableFile("the CSV file is not UTF-8 text") from None
    except csv.Error as ex:
        raise UnreadableFile(f"the CSV file cannot be read: {ex}") from None


def csv_header(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as source:
            return next(csv.reader(source), [])
    except (UnicodeDecodeError, csv.Error):
        raise UnreadableFile("the CSV file is not UTF-8 text with a header row") from None


class OurExport:
    """A zip our own export made: ``manifest.json`` saying so, ``settings.json``, and a JSON Lines
    file per kind, read line by line from the archive (never a whole file in memory)."""

    def __init__(self, path: Path):
        self.path = path
        if not zipfile.is_zipfile(path):
            raise UnreadableFile("the file is not a zip archive")
        try:
            with zipfile.ZipFile(path) as archive:
                manifest = json.loads(archive.read("manifest.json"))
                self.settings = json.loads(archive.read("settings.json")) if "settings.json" in archive.namelist() else {}
        except KeyError:
            raise UnreadableFile("the zip holds no manifest.json: it is not an export of this platform") from None
        except (ValueError, zipfile.BadZipFile) as ex:
            raise UnreadableFile(f"the export's manifest cannot be read: {ex}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != "feedback-export":
            raise UnreadableFile("manifest.json does not say format 'feedback-export': it is not an export of this platform")
        if not isinstance(manifest.get("formatVersion"), int) or manifest["formatVersion"] > FORMAT_VERSION:
            raise UnreadableFile(f"the export's format version {manifest.get('formatVersion')!r} is newer than this platform reads "
                                 f"({FORMAT_VERSION})")
        if not isinstance(self.settings, dict):
            raise UnreadableFile("settings.json is not an object")
        self.manifest = manifest

    def items(self, kind: str) -> Iterator[dict]:
        """Every item of ``<kind>.jsonl``, streamed; none if the zip lacks it."""
        try:
            with zipfile.ZipFile(self.path) as archive:
                if f"{kind}.jsonl" not in archive.namelist():
                    return
                with archive.open(f"{kind}.jsonl") as raw:
                    for number, line in enumerate(io.TextIOWrapper(raw, encoding="utf-8"), 1):
                        if not line.strip():
                            continue
                        try:
                            item = json.loads(line)
                        except ValueError as ex:
                            raise UnreadableFile(f"{kind}.jsonl line {number} is not JSON: {ex}") from None
                        if isinstance(item, dict):
                            yield item
        except zipfile.BadZipFile as ex:
            raise UnreadableFile(f"the zip archive cannot be read: {ex}") from None
