"""The values table of docs/deployment.md, generated from values.yaml's comments.

A value is documented by a comment starting with `# --` right above its key (its whole
subtree is its default); other keys are sections and carry a plain comment. Print the table
with `.venv/bin/python charts/tests/values_doc.py`.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

VALUES = Path(__file__).resolve().parents[1] / "feedback" / "values.yaml"
KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w-]*):(?P<rest>.*)$")


@dataclass
class Key:
    path: str
    line: int
    comment: list[str]  # the comment lines directly above, without "#"

    @property
    def documented(self) -> bool:
        return bool(self.comment) and self.comment[0].startswith("--")

    @property
    def description(self) -> str:
        text = " ".join(c.strip() for c in self.comment)
        return text.removeprefix("--").strip()


def keys(text: str) -> list[Key]:
    """Every mapping key of values.yaml with its dotted path and the comment above it."""
    found, stack, comment = [], [], []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip() if not stripped.startswith("# ") else stripped[2:])
            continue
        if not stripped:
            comment = []
            continue
        match = KEY.match(line)
        if not match:  # a list item or a continuation line inside a documented value
            comment = []
            continue
        depth = len(match["indent"])
        stack = [(d, k) for d, k in stack if d < depth] + [(depth, match["key"])]
        found.append(Key(".".join(k for _, k in stack), number, comment))
        comment = []
    return found


def undocumented(text: str) -> list[str]:
    """Keys with no comment above them that are not inside a documented value."""
    documented = [k.path for k in keys(text) if k.documented]
    return [f"line {k.line}: {k.path}" for k in keys(text)
            if not k.comment and not any(k.path.startswith(d + ".") for d in documented)]


def lookup(values: dict, path: str):
    for part in path.split("."):
        values = values[part]
    return values


def table(text: str) -> str:
    values = yaml.safe_load(text)
    rows = ["| Value | Default | What it does |", "|---|---|---|"]
    for key in keys(text):
        if key.documented:
            default = json.dumps(lookup(values, key.path), separators=(", ", ": "))
            description = key.description.replace("|", r"\|")
            rows.append(f"| `{key.path}` | `{default}` | {description} |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.stdout.write(table(VALUES.read_text()) + "\n")
