"""The mail the people service sends: sign-in links and invitations, in the workspace's name.

What each says is its templates' (``people/templates/mail/``, written by ``common.letters``);
here is what goes in them. Each letter is queued (``common.mail.MailQueue``) under a key
derived from what it carries, so a retried request mails once; the ``mailer`` worker sends the
queue.

Each is in its reader's language (docs/languages.md), among the workspace's languages: a
sign-in link in the language of the page that asked for it, else the person's own choice, else
the workspace's default; an invitation in the invited person's own choice where they made one,
else the language of the page it was sent from, else the workspace's default."""

from __future__ import annotations

from typing import Callable

from common import i18n
from common.i18n import N_
from common.letters import Letters
from common.mail import Branding, MailQueue

# A role as an invitation names it (translated as the mail is written).
ROLE_NAMES = {
    # Translators: a role on a workspace's team, in "... invited you to join Acme's feedback team as owner."
    "owner": N_("owner"),
    # Translators: a role on a workspace's team, in "... invited you to join Acme's feedback team as manager."
    "manager": N_("manager"),
}


class PeopleMail:
    def __init__(self, queue: MailQueue, workspace_name, languages: Callable[[str], dict] = lambda slug: {}):
        """``workspace_name``: ``slug -> name`` (the workspaces service's, for the greeting and
        the sender's display name); ``languages``: ``slug -> {defaultLocale, locales}`` (the
        workspace's branding)."""
        self.queue = queue
        self.workspace_name = workspace_name
        self.languages = languages
        self.letters = Letters("people")

    def _branding(self, slug: str) -> Branding:
        return Branding(name=self.workspace_name(slug) or slug)

    def _locale(self, slug: str, first: str | None, then: str | None) -> str:
        """``first`` if the workspace enabled it, else ``then`` if it did, else its default."""
        languages = self.languages(slug) or {}
        return i18n.choose(asked=first, chosen=then, enabled=languages.get("locales") or (),
                           default=languages.get("defaultLocale"))

    def sign_in_link(self, slug: str, to: str, link: str, minutes: int, key: str, board: str,
                     asked: str | None = None, chosen: str | None = None) -> None:
        """``asked``: the language of the page that asked; ``chosen``: the person's own."""
        message = self.letters.write("sign_in", to=to, branding=self._branding(slug), locale=self._locale(slug, asked, chosen),
                                     values={"link": link, "minutes": minutes, "board": board})
        self.queue.enqueue(message, key=f"sign-in:{key}")

    def invitation(self, slug: str, to: str, role: str, inviter: str | None, link: str, days: int, key: str,
                   board: str, chosen: str | None = None, asked: str | None = None) -> None:
        """``inviter``: who sent it, as the mail names them (a member with their address);
        ``chosen``: the invited person's own language, if they are someone who chose one;
        ``asked``: the language of the page it was sent from."""
        message = self.letters.write("invitation", to=to, branding=self._branding(slug), locale=self._locale(slug, chosen, asked),
                                     values={"role": ROLE_NAMES.get(role, role), "inviter": inviter, "link": link, "days": days,
                                             "board": board})
        self.queue.enqueue(message, key=f"invitation:{key}")
