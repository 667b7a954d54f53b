"""The mail the people service sends: sign-in links and invitations, in the workspace's name.

Each letter is queued (``common.mail.MailQueue``) under a key derived from what it carries, so
a retried request mails once; the ``mailer`` worker sends the queue."""

from __future__ import annotations

from html import escape

from common.mail import Branding, MailQueue, Message


class Letters:
    def __init__(self, queue: MailQueue, workspace_name):
        """``workspace_name``: ``slug -> name`` (the workspaces service's, for the greeting and
        the sender's display name)."""
        self.queue = queue
        self.workspace_name = workspace_name

    def _branding(self, slug: str) -> Branding:
        return Branding(name=self.workspace_name(slug) or slug)

    def sign_in_link(self, slug: str, to: str, link: str, minutes: int, key: str, board: str) -> None:
        branding = self._branding(slug)
        why = (f"You got this because this address was entered on the sign-in page of {branding.name}'s feedback "
               f"board ({board}). If that was not you, ignore this message: nothing happens without the link.")
        text = (f"Sign in to {branding.name}'s feedback board:\n\n{link}\n\n"
                f"The link works once, for {minutes} minutes.\n\n{why}")
        html = (f"<p>Sign in to {escape(branding.name)}'s feedback board:</p>"
                f'<p><a href="{escape(link)}">Sign in</a></p>'
                f"<p>The link works once, for {minutes} minutes.</p><p>{escape(why)}</p>")
        self.queue.enqueue(Message(to=to, subject=f"Sign in to {branding.name}", text=text, html=html, branding=branding),
                           key=f"sign-in:{key}")

    def invitation(self, slug: str, to: str, role: str, inviter: str | None, link: str, days: int, key: str,
                   board: str) -> None:
        """``inviter``: who sent it, as the mail names them (a member with their address)."""
        branding = self._branding(slug)
        who = inviter or "The team"
        why = (f"Sent by the feedback platform on behalf of {who}, from {branding.name}'s feedback board ({board}). "
               "If you do not know them, ignore this message: nothing happens unless you accept.")
        text = (f"{who} invited you to join {branding.name}'s feedback team as {role}.\n\n"
                f"Accept the invitation:\n{link}\n\nThe link works once, for {days} days.\n\n{why}")
        html = (f"<p>{escape(who)} invited you to join {escape(branding.name)}'s feedback team as {escape(role)}.</p>"
                f'<p><a href="{escape(link)}">Accept the invitation</a></p>'
                f"<p>The link works once, for {days} days.</p><p>{escape(why)}</p>")
        self.queue.enqueue(Message(to=to, subject=f"Join {branding.name} on Feedback", text=text, html=html, branding=branding),
                           key=f"invitation:{key}")
