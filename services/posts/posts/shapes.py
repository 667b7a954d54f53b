"""Response and event shapes (fields as the OpenAPI document names them), built from stored documents."""

from __future__ import annotations

from datetime import datetime, timedelta

from bson import ObjectId

from common.auth import PERSON_PREFIX
from common.ids import iso
from common.money import from_cents
from posts import contract
from posts.contract import APPROVED
from posts.readmodel import Snapshot
from posts.triage import Settings

NO_TRIAGE = Settings()


def post(doc: dict, ws: Snapshot, voted: bool = False, manager: bool = False, triage: Settings = NO_TRIAGE,
         reader: Reader | None = None) -> dict:
    """A Post as the caller may see it: ``commentCount`` counts private comments for managers
    only, merged posts that are not approved (pending, rejected, spam), ``revenue``, the owner,
    the score and internal fields show to managers only (``triage``: the workspace's settings,
    which say which fields are internal; a post without tags or fields needs none)."""
    comments = doc.get("commentCount", 0) + (doc.get("privateCommentCount", 0) if manager else 0)
    merged_into = doc.get("mergedInto")
    if merged_into and not (manager or _approved(merged_into)):
        merged_into = None
    merged_posts = [m for m in doc.get("mergedPosts", []) if manager or _approved(m)]
    shown = {
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
        "mergedPosts": [{"id": m["id"], "title": m["title"], "voteCount": m.get("voteCount", 0)} for m in merged_posts],
        "createdAt": iso(doc["createdAt"]),
        "editedAt": iso(doc.get("editedAt")),
        **triage.shape(doc, manager),
        **(reader or TEAM).of(doc),
    }
    if manager:  # the companies behind the votes are the team's business
        shown["revenue"] = from_cents(doc.get("revenueCents", 0))
    return shown


def post_event(doc: dict, ws: Snapshot, triage: Settings = NO_TRIAGE) -> dict:
    """A Post in an event payload (for the team's webhook endpoints, which see what the team
    sees: internal fields, owner, score): every merged post, the public comment count, no
    caller-specific ``voted``."""
    shape = post(doc, ws, manager=True, triage=triage, reader=TEAM)
    shape["commentCount"] = doc.get("commentCount", 0)
    for caller_specific in ("voted", "mine", "editableUntil"):
        del shape[caller_specific]
    return shape


def link(doc: dict, **extra) -> dict:
    """What another post keeps of this one (``mergedInto`` / ``mergedPosts``): enough to show it
    and to know whom it may be shown to."""
    return {"id": str(doc["_id"]), "title": doc["title"], "moderationState": doc["moderationState"], **extra}


def _approved(link_: dict) -> bool:
    # Links written before moderation states were kept with them count as approved.
    return link_.get("moderationState", APPROVED) == APPROVED


def comment(doc: dict) -> dict:
    """A comment as events carry it (to the team's receivers: its author named)."""
    return {
        "id": str(doc["_id"]),
        "postId": str(doc["postId"]),
        "parentId": doc.get("parentId"),
        "content": doc["content"],
        "isTeamMember": bool(doc.get("isTeamMember", False)),
        "authorName": doc.get("authorName"),
        "author": TEAM.author(doc),
        "isPrivate": bool(doc.get("isPrivate", False)),
        "createdAt": iso(doc["createdAt"]),
    }


def exported_post(doc: dict) -> dict:
    """A post as a workspace's export carries it: what it says, where it is, who wrote it
    (``authorId``: ``person:<id>``, ``sso:<id>``, a key or anonymous), its triage and its dates."""
    merged_into = doc.get("mergedInto")
    return {
        "id": str(doc["_id"]), "boardId": doc["boardId"], "title": doc["title"], "content": doc.get("content", ""),
        "status": doc["statusSlug"], "moderationState": doc["moderationState"],
        "authorId": doc["authorId"], "author": _exported_author(doc),
        "tags": list(doc.get("tags", [])), "fields": dict(doc.get("fields") or {}), "owner": doc.get("owner"),
        "eta": doc.get("eta"), "voteCount": doc.get("voteCount", 0),
        "commentCount": doc.get("commentCount", 0), "privateCommentCount": doc.get("privateCommentCount", 0),
        "mergedInto": merged_into["id"] if merged_into else None,
        "createdAt": iso(doc["createdAt"]), "editedAt": iso(doc.get("editedAt")),
        "statusChangedAt": iso(doc.get("statusChangedAt")),
    }


def exported_vote(doc: dict) -> dict:
    """A vote as an export carries it: the voter, the post voted on and the one it counts for
    (a merged post's votes count for the post it was merged into)."""
    return {"id": str(doc["_id"]), "postId": str(doc["postId"]), "countsFor": doc["countsFor"], "userId": doc["userId"],
            "name": doc.get("name"), "createdAt": iso(doc["createdAt"])}


def exported_comment(doc: dict) -> dict:
    """A comment as an export carries it, private ones (``isPrivate``) too."""
    return {"id": str(doc["_id"]), "postId": str(doc["postId"]), "parentId": doc.get("parentId"), "content": doc["content"],
            "authorId": doc["authorId"], "author": _exported_author(doc), "isTeamMember": bool(doc.get("isTeamMember", False)),
            "isPrivate": bool(doc.get("isPrivate", False)), "createdAt": iso(doc["createdAt"]), "editedAt": iso(doc.get("editedAt"))}


def _exported_author(doc: dict) -> dict | None:
    stored = doc.get("author")
    if not stored:
        return {"name": doc["authorName"], "avatarUrl": None, "isTeamMember": bool(doc.get("isTeamMember"))} if doc.get("authorName") else None
    return {"name": stored.get("name"), "avatarUrl": stored.get("avatarUrl"), "isTeamMember": bool(stored.get("team"))}


def comment_seen(doc: dict, reader: Reader) -> dict:
    """A comment as a reader sees it: when it was edited, whether it is the reader's and until
    when they may change it; a deleted one (shown only while replies hang below it) keeps its
    place and thread, and nothing of what it said or who said it."""
    shown = {**comment(doc), "editedAt": iso(doc.get("editedAt")), "deleted": doc.get("deletedAt") is not None,
             **reader.of(doc)}
    if shown["deleted"]:
        shown.update(content="", authorName=None, author=None, isTeamMember=False, editedAt=None, mine=False, editableUntil=None)
    return shown


class Reader:
    """Who reads, and what that lets them see of who wrote what: their identity (None for an
    anonymous visitor, who edits nothing), the window in which an author may still change what
    they wrote (``mine`` and ``editableUntil``), and whether they see end users' names
    (``names``: false for an end user of a workspace that hides them, ``hideCustomerNames``;
    a team member's name shows to everyone, and a person always sees their own)."""

    def __init__(self, identity: str | None, window_seconds: float, names: bool = True):
        self.identity = identity
        self.window = timedelta(seconds=window_seconds)
        self.names = names

    def mine(self, doc: dict) -> bool:
        return self.identity is not None and doc.get("authorId") == self.identity

    def until(self, doc: dict) -> datetime:
        return doc["createdAt"] + self.window

    def author(self, doc: dict) -> dict | None:
        """The ``author`` of a post or comment as this reader may see it (contract.AUTHOR)."""
        stored = doc.get("author")
        if not stored or not (stored.get("team") or self.names or self.mine(doc)):
            return None
        return {"name": stored.get("name"), "avatarUrl": stored.get("avatarUrl"), "isTeamMember": bool(stored.get("team"))}

    def of(self, doc: dict) -> dict:
        mine = self.mine(doc)
        return {"mine": mine, "editableUntil": iso(self.until(doc)) if mine else None, "author": self.author(doc)}


# The team's view (events to its webhook receivers, answers built without a caller): every
# name, nothing the reader's own.
TEAM = Reader(None, 0)


def voter(vote: dict, person: dict | None, companies: dict[str, dict]) -> dict:
    """A vote as the team sees it: who (a person's name and address, or the name the voter
    had), their companies with their spend, and for a vote on someone's behalf who added it
    and from where."""
    return {
        "userId": vote["userId"],
        "name": (person or {}).get("name") or vote.get("name"),
        "email": (person or {}).get("email"),
        "companies": [{"id": c, "name": companies[c].get("name") or c, "monthlySpend": from_cents(companies[c].get("spendCents", 0))}
                      for c in vote.get("companies", ()) if c in companies],
        "addedBy": vote.get("addedBy"),
        "source": vote.get("source"),
        "note": vote.get("note"),
        "createdAt": iso(vote["createdAt"]),
    }


def vote_receipt(post: dict, created: bool) -> dict:
    """A vote on someone's behalf as a caller outside the team (a write key) sees it: the post
    it counts for, the post's vote count, and whether this call added it. Nothing of the person
    or of a vote made before (their name, address, companies, spend, who added it, its source
    and note): a repeat says "counted already" and no more."""
    return {"postId": str(post["_id"]), "voteCount": post.get("voteCount", 0), "created": created}


def brief(doc: dict, manager: bool) -> dict:
    """A post in board statistics: its status by slug (as ``byStatus`` counts them) and the
    comment count the caller sees (private ones too for managers, as in Post)."""
    return {
        "id": str(doc["_id"]),
        "title": doc["title"],
        "status": doc["statusSlug"],
        "voteCount": doc.get("voteCount", 0),
        "commentCount": doc.get("commentCount", 0) + (doc.get("privateCommentCount", 0) if manager else 0),
        "createdAt": iso(doc["createdAt"]),
    }


def stalled(doc: dict, manager: bool, at: datetime) -> dict:
    """A post awaiting the team's answer: since when, and for how many whole days at ``at``."""
    return {**brief(doc, manager), "lastCommentAt": iso(doc["lastCommentAt"]), "daysWaiting": (at - doc["lastCommentAt"]).days}


def happened(kind: str, at: datetime, actor: dict | None, **what) -> dict:
    """An entry of a post's history (contract.STATUS_CHANGE: ``was`` and ``status`` slugs; a
    merge: ``post``, the other post's link), as it is stored."""
    return {"type": kind, "at": at, "actor": actor, **what}


def history(doc: dict, ws: Snapshot, manager: bool) -> dict:
    """A post's history as the caller may see it, newest first: status changes with the
    statuses as the workspace names them now, and merges with the other post. Everyone sees who
    on the team did it when a person did (a signed-in member's name, as on their comments);
    an API key's or the operator's name is the team's business. A merge with a post that was
    not approved (pending, spam) shows to the team only."""
    items = []
    for entry in reversed(doc.get("history") or ()):
        actor = entry.get("actor") or None
        if actor and not manager and not str(actor.get("id", "")).startswith(PERSON_PREFIX):
            actor = None
        shown = {"type": entry["type"], "at": iso(entry["at"]), "actor": actor if manager else actor and {"name": actor.get("name")}}
        if entry["type"] == contract.STATUS_CHANGE:
            shown.update(was=ws.status_shape(entry["was"]), status=ws.status_shape(entry["status"]))
        else:
            other = entry.get("post") or {}
            if not (manager or _approved(other)):
                continue
            shown["post"] = {"id": other.get("id"), "title": other.get("title")}
        items.append(shown)
    return {"items": items}


def roadmap_entry(doc: dict, triage: Settings = NO_TRIAGE, voted: bool = False) -> dict:
    """A roadmap item, from what the read engine returns of the post (posts.reads.Reads.roadmap):
    its tags (shown as the workspace's ``triage`` settings name them) and ETA, as everyone sees
    them, and whether the caller voted for it."""
    public = triage.shape(doc, team=False)
    return {"id": str(doc["_id"]), "title": doc["title"], "voteCount": doc.get("voteCount", 0),
            "tags": public["tags"], "eta": public["eta"], "voted": voted}


def preview_item(doc: dict, score: float) -> dict:
    """A post in a formula's preview (the team's): the score the formula tried gives it, beside
    the score it has now (the saved formula's) and what both are computed from."""
    return {"id": str(doc["_id"]), "title": doc["title"], "voteCount": doc.get("voteCount", 0),
            "revenue": from_cents(doc.get("revenueCents", 0)), "score": round(score, 4),
            "currentScore": round(doc["score"], 4) if doc.get("score") is not None else float(doc.get("voteCount", 0))}


def suggestion(doc: dict, posts: dict, ws: Snapshot) -> dict:
    """A suggested duplicate as the team sees it: both posts (null once deleted), how similar."""
    def brief_of(post_id: str) -> dict | None:
        found = posts.get(ObjectId(post_id))
        if found is None or found.get("deletedAt") is not None:
            return None
        return {"id": post_id, "title": found["title"], "status": ws.status_shape(found["statusSlug"]),
                "voteCount": found.get("voteCount", 0), "moderationState": found["moderationState"],
                "mergedInto": found["mergedInto"]["id"] if found.get("mergedInto") else None}

    return {
        "id": doc["_id"],
        "post": brief_of(doc["postId"]),
        "into": brief_of(doc["intoId"]),
        "similarity": doc["similarity"],
        "state": doc["state"],
        "decidedBy": doc.get("decidedBy"),
        "decidedAt": iso(doc["decidedAt"]) if doc.get("decidedAt") else None,
        "createdAt": iso(doc["createdAt"]),
    }
