"""Writing an export: each kind as a JSON Lines file in a temporary folder as its pages arrive,
``posts.csv`` beside ``posts.jsonl``, then one zip of them all (members streamed from disk), so
memory holds a page at a time whatever the workspace's size."""

from __future__ import annotations

import csv
import json
import os
import zipfile
from pathlib import Path

# The columns a spreadsheet wants, one row a post (docs/import-export.md).
CSV_COLUMNS = ("id", "title", "details", "board", "status", "author email", "author name", "votes", "created", "tags", "eta")


def dumps(item) -> str:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class Folder:
    """The temporary files of one export run."""

    def __init__(self, path: Path):
        self.path = path
        self.files: dict[str, object] = {}
        self.counts: dict[str, int] = {}
        self.csv_file = None
        self.csv = None

    def lines(self, kind: str, items: list[dict]) -> None:
        out = self.files.get(kind)
        if out is None:
            out = self.files[kind] = open(self.path / f"{kind}.jsonl", "w", encoding="utf-8", newline="\n")
            self.counts[kind] = 0
        for item in items:
            out.write(dumps(item) + "\n")
        self.counts[kind] += len(items)

    def json(self, name: str, value) -> None:
        (self.path / name).write_text(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def csv_rows(self, rows: list[list]) -> None:
        if self.csv is None:
            # utf-8-sig: spreadsheet programs read the byte order mark as "this is UTF-8".
            self.csv_file = open(self.path / "posts.csv", "w", encoding="utf-8-sig", newline="")
            self.csv = csv.writer(self.csv_file)
            self.csv.writerow(CSV_COLUMNS)
        self.csv.writerows(rows)

    def zip(self, names: list[str], target: Path) -> int:
        """Close the files and write ``names`` (in this order; an empty kind as an empty file)
        into the zip ``target``; its size in bytes."""
        for out in [*self.files.values(), *([self.csv_file] if self.csv_file else [])]:
            out.close()
        if self.csv is None:
            self.csv_rows([])
            self.csv_file.close()
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for name in names:
                path = self.path / name
                if not path.exists():
                    path.touch()
                archive.write(path, arcname=name)
        return os.path.getsize(target)
