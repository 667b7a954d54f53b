"""Response and event shapes (fields as the OpenAPI document names them), built from stored documents."""

from __future__ import annotations

from common.ids import iso
from posts.readmodel import Snapshot


def post(doc: dict, ws: Snapshot, voted: bool = False, manager: bool = False) -> dict:
    """A Post. ``commentCount`` counts what the caller can see: managers also count private comments."""
    comments = doc.get("commentCount", 0) + (doc.get("privateCommentCount", 0) if manager else 0)
    merged_into = doc.get("mergedInto")
    return {
        "id": str(doc["_id"]),
        "title": doc["title"],
        "content": doc.get("content", ""),
        "boardId": doc["boardId"],
        "status": ws.status_shape(doc["statusSlug"]),
        "voteCount": doc.get("voteCount", 0),
        "commentCount": comments,
        "verified": bool(doc.get("verified", False)),
        "moderationState": doc["moderationState"],
        "voted": voted,
        "mergedInto": {"id": merged_into["id"], "title": merged_into["title"]} if merged_into else None,
        "mergedPosts": [{"id": m["id"], "title": m["title"], "voteCount": m.get("voteCount", 0)} for m in doc.get("mergedPosts", [])],
        "createdAt": iso(doc["createdAt"]),
    }


def post_event(doc: dict, ws: Snapshot) -> dict:
    """A Post in an event payload: public comment count, no caller-specific ``voted``."""
    shape = post(doc, ws)
    del shape["voted"]
    return shape


def comment(doc: dict) -> dict:
    return {
        "id": str(doc["_id"]),
        "postId": str(doc["postId"]),
        "parentId": doc.get("parentId"),
        "content": doc["content"],
        "isTeamMember": bool(doc.get("isTeamMember", False)),
        "isPrivate": bool(doc.get("isPrivate", False)),
        "createdAt": iso(doc["createdAt"]),
    }


def roadmap_item(doc: dict) -> dict:
    return {"id": str(doc["_id"]), "title": doc["title"], "voteCount": doc.get("voteCount", 0)}
