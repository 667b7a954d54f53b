"""The mail the notifications service sends: what each kind says, in the workspace's name.

Every letter names the post (its title, a link to it on the board) and ends with why it came,
a link to the preferences page and a one-click unsubscribe link; its headers say the same to
the mail client (RFC 8058: ``List-Unsubscribe`` with the https link and
``List-Unsubscribe-Post: List-Unsubscribe=One-Click``). Texts are escaped here, once, for the
HTML part; ``common.mail`` wraps it in the workspace's layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from urllib.parse import urlencode

from common.mail import Message
from notifications.directory import Board
from notifications.tokens import UnsubscribeTokens

EXCERPT = 400  # characters of a comment quoted in a mail


@dataclass(frozen=True)
class Letter:
    """What one mail says, before it is addressed: a subject, paragraphs, and links."""

    subject: str
    lines: tuple[str, ...]  # paragraphs of plain text
    links: tuple[tuple[str, str], ...] = ()  # (label, url): a button each in HTML, a line each in text
    why: str = "You get this because you follow this post."


def excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def post_link(board: Board, post: dict) -> tuple[str, str]:
    return ("View the post", board.page(f"/p/{post['_id']}"))


def status_changed(board: Board, post: dict, old: dict | None, new: dict) -> Letter:
    was = f" (it was {old['name']})" if old and old.get("slug") != new.get("slug") else ""
    return Letter(subject=f"{post['title']} is now {new['name']}",
                  lines=(f"“{post['title']}” is now {new['name']}{was}.",),
                  links=(post_link(board, post),))


def reply(board: Board, post: dict, comment: dict, author: str | None, to_your_comment: bool) -> Letter:
    who = f"{author} (team)" if comment.get("isTeamMember") and author else ("The team" if comment.get("isTeamMember") else "Someone")
    what = "replied to your comment on" if to_your_comment else "replied on"
    why = "You get this because you wrote the comment it answers." if to_your_comment else None
    return Letter(subject=f"New reply on {post['title']}",
                  lines=(f"{who} {what} “{post['title']}”:", excerpt(comment["content"])),
                  links=(post_link(board, post),), **({"why": why} if why else {}))


def merged(board: Board, post: dict, into: dict) -> Letter:
    return Letter(subject=f"{post['title']} was merged into {into['title']}",
                  lines=(f"“{post['title']}” was merged into “{into['title']}”: your vote counts there now, "
                         "and you follow it instead.",),
                  links=(post_link(board, into),))


def shipped(board: Board, entry: dict, posts: list[dict]) -> Letter:
    names = [f"“{p['title']}”" for p in posts]
    lines = (f"{board.branding.name} shipped what you asked for: {entry['title']}.",
             *(f"• {name}" for name in names))
    one = len(posts) == 1
    return Letter(subject=f"Shipped: {posts[0]['title']}" if one else f"Shipped: {len(posts)} posts you follow",
                  lines=lines, links=(("Read the changelog", board.page("/changelog")),),
                  why="You get this because you follow " + ("this post." if one else "these posts."))


TEAM_HEADLINES = {
    "new_post": "New post",
    "awaiting_moderation": "Awaiting moderation",
    "new_comment": "New comment",
}


def team_activity(board: Board, kind: str, post: dict, detail: str | None) -> Letter:
    headline = TEAM_HEADLINES[kind]
    lines = (f"{headline}: “{post['title']}”.",) + ((excerpt(detail),) if detail else ())
    return Letter(subject=f"{headline}: {post['title']}", lines=lines, links=(post_link(board, post),),
                  why="You get this as a member of the team; choose a daily or weekly digest in your preferences.")


def digest(board: Board, items: list[dict]) -> Letter:
    lines = [f"{len(items)} update{'s' if len(items) != 1 else ''} on {board.branding.name}'s board:"]
    lines += [f"• {TEAM_HEADLINES[i['kind']]}: “{i['title']}” {board.page('/p/' + i['postId'])}" for i in items]
    return Letter(subject=f"Digest: {len(items)} update{'s' if len(items) != 1 else ''} on {board.branding.name}",
                  lines=tuple(lines), links=(("Open the board", board.page("")),),
                  why="You get this digest as a member of the team.")


class Addresser:
    """Turns a letter into one person's message: the unsubscribe token and links are theirs."""

    def __init__(self, tokens: UnsubscribeTokens):
        self.tokens = tokens

    def message(self, board: Board, letter: Letter, person_id: str, email: str) -> Message:
        token = self.tokens.make(board.slug, person_id)
        unsubscribe = board.page("/unsubscribe?" + urlencode({"token": token}))
        preferences = board.page("/account/notifications")
        text_links = [f"{label}: {url}" for label, url in letter.links]
        text = "\n\n".join([*letter.lines, *text_links,
                            f"{letter.why}\nPreferences: {preferences}\nUnsubscribe from {board.branding.name}: {unsubscribe}"])
        html_links = "".join(f'<p><a href="{escape(url)}" style="color:#4f46e5;font-weight:600">{escape(label)}</a></p>'
                             for label, url in letter.links)
        html = ("".join(f"<p>{escape(line)}</p>" for line in letter.lines) + html_links +
                f'<p style="color:#71717a;font-size:12px">{escape(letter.why)} '
                f'<a href="{escape(preferences)}">Preferences</a> · <a href="{escape(unsubscribe)}">Unsubscribe</a></p>')
        return Message(
            to=email, subject=letter.subject, text=text, html=html, branding=board.branding, workspace=board.slug,
            headers={"List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
        )
