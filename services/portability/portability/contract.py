"""What the portability service owns: export jobs, their statuses, the files of an export."""

from common.auth import ACTOR_SCHEMA as ACTOR
from common.validation import INTEGER, TEXT, TIMESTAMP, array, nullable, obj, shape

TOPIC = "feedback.portability"
# A person erased (people.privacy): the kept exports naming them lose their file (portability.erasure).
CONSUMES = ("feedback.people",)
PERSON_ERASED = "person.erased"
# An export was started: the people service writes it to the workspace's audit log (who took
# the workspace's data away, and when).
EXPORT_CREATED = "export.created"
# An import ended (succeeded or failed): the people service writes it to the audit log (who
# brought what into the workspace). The only event of an import: what it brings sends none.
IMPORT_FINISHED = "import.finished"
EVENTS = {
    EXPORT_CREATED: shape({"exportId": TEXT, "actor": ACTOR}),
    IMPORT_FINISHED: shape({"importId": TEXT, "source": TEXT, "status": TEXT, "errorCount": INTEGER, "actor": ACTOR}),
}

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


# -- imports -----------------------------------------------------------------------------------

# ``ours``: the zip our own export makes (or its posts.csv alone: a file that is not a zip is
# read as that CSV).
SOURCES = ("canny", "csv", "ours")
# What a source's file is sent as: Canny's JSON or a zip of it, a CSV, our export's zip or its
# posts.csv. Anything else is 415; a file of another source's type is taken, and fails its job
# as unreadable (a CSV is read as text whatever it was sent as).
CONTENT_TYPES = {"canny": ("application/json", "application/zip"), "csv": ("text/csv",), "ours": ("application/zip", "text/csv")}
IMPORT_CONTENT_TYPES = ("application/json", "application/zip", "text/csv")
# The largest file an import takes (the gateway's limit for its route: Route.max_body). A Canny
# zip of its JSON lists compresses about ten times: some 300 MiB of JSON.
IMPORT_MAX_BYTES = 32 * 1024 * 1024
# What an import brings, in the order it writes them: each refers to those before it.
IMPORT_KINDS = ("boards", "statuses", "tags", "fields", "people", "companies", "posts", "merges", "votes", "comments",
                "changelogs", "settings")
# Items sent to an owning service at once (its IMPORT schema takes up to 1000).
IMPORT_BATCH = 500
# Errors an import keeps (errorCount counts them all).
IMPORT_ERRORS_KEPT = 100
# The CSV columns each preset maps (docs/import-export.md): our own export's posts.csv, Fider's.
CSV_FIELDS = ("id", "title", "details", "board", "status", "authorEmail", "authorName", "votes", "created", "tags", "eta")
CSV_PRESETS = {
    "ours": {"id": "id", "title": "title", "details": "details", "board": "board", "status": "status",
             "authorEmail": "author email", "authorName": "author name", "votes": "votes", "created": "created",
             "tags": "tags", "eta": "eta"},
    "fider": {"id": "number", "title": "title", "details": "description", "status": "status", "votes": "votes_count",
              "created": "created_at", "tags": "tags"},
}

IMPORT = shape({
    "id": TEXT, "workspace": TEXT, "source": {"enum": list(SOURCES)}, "status": {"enum": list(STATUSES)},
    "progress": shape({"done": INTEGER, "total": nullable(INTEGER)}),
    "counts": obj({kind: INTEGER for kind in IMPORT_KINDS}),
    "errors": array(shape({"item": TEXT, "message": TEXT})), "errorCount": INTEGER,
    "filename": nullable(TEXT), "sizeBytes": INTEGER,
    "createdAt": TIMESTAMP, "startedAt": nullable(TIMESTAMP), "finishedAt": nullable(TIMESTAMP),
})
