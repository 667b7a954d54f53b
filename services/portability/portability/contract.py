"""What the portability service owns: export jobs, their statuses, the files of an export."""

from common.auth import ACTOR_SCHEMA as ACTOR
from common.validation import INTEGER, TEXT, TIMESTAMP, array, nullable, obj, shape

TOPIC = "feedback.portability"
CONSUMES = ()
# An export was started: the people service writes it to the workspace's audit log (who took
# the workspace's data away, and when).
EXPORT_CREATED = "export.created"
EVENTS = {EXPORT_CREATED: shape({"exportId": TEXT, "actor": ACTOR})}

QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED)
UNFINISHED = (QUEUED, RUNNING)

# The zip's format version (manifest.json); a change of a file's shape bumps it.
FORMAT_VERSION = 1

# What an export reads, in order: (kind, owning service). Settings first (one object), then
# what a board is made of, then what people wrote, then who they are (people named by posts,
# votes and comments that never signed in to the workspace are asked for last, by id).
STEPS = (
    ("settings", "workspaces"),
    ("boards", "workspaces"),
    ("statuses", "workspaces"),
    ("tags", "posts"),
    ("fields", "posts"),
    ("changelogs", "workspaces"),
    ("companies", "companies"),
    ("posts", "posts"),
    ("votes", "posts"),
    ("comments", "posts"),
    ("people", "people"),
)
# Every kind but settings is a JSON Lines file and counts its items.
COUNTED = tuple(kind for kind, _ in STEPS if kind != "settings")
# The steps of progress: each kind read, then the zip written and stored.
TOTAL_STEPS = len(STEPS) + 1

# A worker that claimed an export and died gives it back when its lease ends; a running export
# renews the lease after each page it reads.
LEASE_SECONDS = 60.0
# Claims of one export past this many: it fails instead of being tried again (a crash it causes).
MAX_ATTEMPTS = 3

PROGRESS = shape({"done": INTEGER, "total": INTEGER})
EXPORT = shape({
    "id": TEXT, "workspace": TEXT, "status": {"enum": list(STATUSES)}, "progress": PROGRESS,
    "counts": obj({kind: INTEGER for kind in COUNTED}),
    "errors": array(shape({"item": TEXT, "message": TEXT})),
    "filename": nullable(TEXT), "sizeBytes": nullable(INTEGER),
    "createdAt": TIMESTAMP, "startedAt": nullable(TIMESTAMP), "finishedAt": nullable(TIMESTAMP),
})
