"""Response shapes of the portability service (``Export`` in its OpenAPI document;
``contract.EXPORT`` is its JSON schema)."""

from common.ids import iso

from portability import contract


def export(doc: dict) -> dict:
    return {
        "id": str(doc["_id"]),
        "workspace": doc["workspace"],
        "status": doc["status"],
        "progress": {"done": doc.get("progress", {}).get("done", 0), "total": contract.TOTAL_STEPS},
        "counts": {kind: (doc.get("counts") or {}).get(kind, 0) for kind in contract.COUNTED},
        "errors": list(doc.get("errors", [])),
        "filename": doc.get("filename"),
        "sizeBytes": doc.get("sizeBytes"),
        "createdAt": iso(doc["createdAt"]),
        "startedAt": iso(doc.get("startedAt")),
        "finishedAt": iso(doc.get("finishedAt")),
    }
