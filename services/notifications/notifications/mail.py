"""The mail the notifications service sends: which kind, saying what, in the workspace's name.

What each kind says is its templates' (``notifications/templates/mail/<kind>.*``, written by
``common.letters``); every kind extends ``mail/notification.*``, so every letter names the
post (its title, a link to it on the board) and ends with why it came, a link to the
preferences page and a one-click unsubscribe link. Its headers say the same to the mail client
(RFC 8058: ``List-Unsubscribe`` with the https link and ``List-Unsubscribe-Post:
List-Unsubscribe=One-Click``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlencode

from common.letters import Letters
from common.mail import Message
from notifications.directory import Board
from notifications.tokens import UnsubscribeTokens

EXCERPT = 400  # characters of a comment quoted in a mail


@dataclass(frozen=True)
class Letter:
    """What one mail says, before it is addressed: its kind (its templates) and their values."""

    kind: str
    values: Mapping[str, Any]


def excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def post_page(board: Board, post: dict) -> str:
    return board.page(f"/p/{post['_id']}")


def status_changed(board: Board, post: dict, old: dict | None, new: dict) -> Letter:
    was = old if old and old.get("slug") != new.get("slug") else None  # the status it left, named when another
    return Letter("status_changed", {"post": post, "new": new, "was": was, "link": post_page(board, post)})


def reply(board: Board, post: dict, comment: dict, author: str | None, to_your_comment: bool) -> Letter:
    """``author``: the comment's author's name (None: not shown)."""
    return Letter("reply", {"post": post, "author": author, "by_team": bool(comment.get("isTeamMember")),
                            "excerpt": excerpt(comment["content"]), "to_your_comment": to_your_comment,
                            "link": post_page(board, post)})


def merged(board: Board, post: dict, into: dict) -> Letter:
    return Letter("merged", {"post": post, "into": into, "link": post_page(board, into)})


def shipped(board: Board, entry: dict, posts: list[dict]) -> Letter:
    return Letter("shipped", {"entry": entry, "posts": posts, "link": board.page("/changelog")})


TEAM_HEADLINES = {
    "new_post": "New post",
    "awaiting_moderation": "Awaiting moderation",
    "new_comment": "New comment",
}


def team_activity(board: Board, kind: str, post: dict, detail: str | None) -> Letter:
    return Letter("team_activity", {"headline": TEAM_HEADLINES[kind], "post": post,
                                    "excerpt": excerpt(detail) if detail else None, "link": post_page(board, post)})


def digest(board: Board, items: list[dict]) -> Letter:
    lines = [{"headline": TEAM_HEADLINES[i["kind"]], "title": i["title"], "link": board.page("/p/" + i["postId"])} for i in items]
    return Letter("digest", {"items": lines, "link": board.page("")})


class Addresser:
    """Turns a letter into one person's message: the unsubscribe token and links are theirs."""

    def __init__(self, tokens: UnsubscribeTokens):
        self.tokens = tokens
        self.letters = Letters("notifications")

    def message(self, board: Board, letter: Letter, person_id: str, email: str) -> Message:
        token = self.tokens.make(board.slug, person_id)
        unsubscribe = board.page("/unsubscribe?" + urlencode({"token": token}))
        return self.letters.write(
            letter.kind, to=email, branding=board.branding, workspace=board.slug,
            values={**letter.values, "preferences": board.page("/account/notifications"), "unsubscribe": unsubscribe},
            headers={"List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
        )
