"""The mail the notifications service sends: which kind, saying what, in the workspace's name.

What each kind says is its templates' (``notifications/templates/mail/<kind>.*``, written by
``common.letters``); every kind extends ``mail/notification.*``, so every letter names the
post (its title, a link to it on the board) and ends with why it came, a link to the
preferences page and a one-click unsubscribe link. Its headers say the same to the mail client
(RFC 8058: ``List-Unsubscribe`` with the https link and ``List-Unsubscribe-Post:
List-Unsubscribe=One-Click``).

Each letter is written in its reader's language (docs/languages.md): the person's own choice
among the workspace's languages, else the workspace's default (:meth:`Board.locale`). What a
letter says is marked for the catalogs where it is written (the templates' ``_()``); the
labels it picks among here are marked ``N_`` and translated in the template, as it renders in
the reader's locale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlencode

from common import i18n
from common.i18n import N_
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


# How a reply mail opens, by who answered (a named team member, the team, someone) and whether it
# answers the reader's own comment: each a whole sentence for the translators.
REPLY_OPENINGS = {
    ("member", True): N_("%(author)s (team) replied to your comment on “%(title)s”:"),
    ("member", False): N_("%(author)s (team) replied on “%(title)s”:"),
    ("team", True): N_("The team replied to your comment on “%(title)s”:"),
    ("team", False): N_("The team replied on “%(title)s”:"),
    ("someone", True): N_("Someone replied to your comment on “%(title)s”:"),
    ("someone", False): N_("Someone replied on “%(title)s”:"),
}


def reply(board: Board, post: dict, comment: dict, author: str | None, to_your_comment: bool) -> Letter:
    """``author``: the comment's author's name (None: not shown)."""
    by_team = bool(comment.get("isTeamMember"))
    who = ("member" if author else "team") if by_team else "someone"
    return Letter("reply", {"post": post, "author": author, "opening": REPLY_OPENINGS[(who, to_your_comment)],
                            "excerpt": excerpt(comment["content"]), "to_your_comment": to_your_comment,
                            "link": post_page(board, post)})


def merged(board: Board, post: dict, into: dict) -> Letter:
    return Letter("merged", {"post": post, "into": into, "link": post_page(board, into)})


def shipped(board: Board, entry: dict, posts: list[dict]) -> Letter:
    return Letter("shipped", {"entry": entry, "posts": posts, "link": board.page("/changelog")})


TEAM_HEADLINES = {
    "new_post": N_("New post"),
    "awaiting_moderation": N_("Awaiting moderation"),
    "new_comment": N_("New comment"),
}


def team_activity(board: Board, kind: str, post: dict, detail: str | None) -> Letter:
    return Letter("team_activity", {"headline": TEAM_HEADLINES[kind], "post": post,
                                    "excerpt": excerpt(detail) if detail else None, "link": post_page(board, post)})


def digest(board: Board, items: list[dict]) -> Letter:
    lines = [{"headline": TEAM_HEADLINES[i["kind"]], "title": i["title"], "link": board.page("/p/" + i["postId"])} for i in items]
    return Letter("digest", {"items": lines, "link": board.page("")})


def status_name(name: str) -> str:
    """A status's name in the reader's language: the default statuses' names are the catalogs'
    (marked in workspaces.contract), a team's own name comes back as it was written. Plain
    text, so the HTML escapes it like any other value (a template's ``_()`` would not: it
    trusts its message as markup)."""
    return i18n.gettext(name) if name else name  # gettext("") is a catalog's header


def letters() -> Letters:
    """The service's kinds of mail, with what their templates call besides ``_()``."""
    written = Letters("notifications")
    written.env.globals["status_name"] = status_name
    return written


class Addresser:
    """Turns a letter into one person's message: the unsubscribe token and links are theirs."""

    def __init__(self, tokens: UnsubscribeTokens):
        self.tokens = tokens
        self.letters = letters()

    def message(self, board: Board, letter: Letter, person_id: str, email: str, locale: str | None = None) -> Message:
        """``locale``: the person's own choice (None: they made none, the workspace's default)."""
        token = self.tokens.make(board.slug, person_id)
        unsubscribe = board.page("/unsubscribe?" + urlencode({"token": token}))
        return self.letters.write(
            letter.kind, to=email, branding=board.branding, workspace=board.slug, locale=board.locale(locale),
            values={**letter.values, "preferences": board.page("/account/notifications"), "unsubscribe": unsubscribe},
            headers={"List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
        )
