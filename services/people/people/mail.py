"""The mail the people service sends: sign-in links and invitations, in the workspace's name.

What each says is its templates' (``people/templates/mail/``, written by ``common.letters``);
here is what goes in them. Each letter is queued (``common.mail.MailQueue``) under a key
derived from what it carries, so a retried request mails once; the ``mailer`` worker sends the
queue."""

from __future__ import annotations

from common.letters import Letters
from common.mail import Branding, MailQueue


class PeopleMail:
    def __init__(self, queue: MailQueue, workspace_name):
        """``workspace_name``: ``slug -> name`` (the workspaces service's, for the greeting and
        the sender's display name)."""
        self.queue = queue
        self.workspace_name = workspace_name
        self.letters = Letters("people")

    def _branding(self, slug: str) -> Branding:
        return Branding(name=self.workspace_name(slug) or slug)

    def sign_in_link(self, slug: str, to: str, link: str, minutes: int, key: str, board: str) -> None:
        message = self.letters.write("sign_in", to=to, branding=self._branding(slug),
                                     values={"link": link, "minutes": minutes, "board": board})
        self.queue.enqueue(message, key=f"sign-in:{key}")

    def invitation(self, slug: str, to: str, role: str, inviter: str | None, link: str, days: int, key: str,
                   board: str) -> None:
        """``inviter``: who sent it, as the mail names them (a member with their address)."""
        message = self.letters.write("invitation", to=to, branding=self._branding(slug),
                                     values={"role": role, "inviter": inviter, "link": link, "days": days, "board": board})
        self.queue.enqueue(message, key=f"invitation:{key}")
