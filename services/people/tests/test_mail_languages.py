"""The people service's mails in their reader's language (docs/languages.md): a sign-in link in
the language of the page that asked for it, else the person's own choice, else the workspace's
default; an invitation in the invited person's own choice, else the inviting page's, else the
workspace's default; each only among the workspace's languages. First without a platform,
every kind in every locale (in the pseudo-locale, no word left out of the catalogs); then end
to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from common import i18n
from people import mail
from people.mail import PeopleMail
from testkit.api import assert_error, create_workspace
from testkit.mail import html_of, unmarked, wait_for_mail

from services.web.tests.helpers import Visitor, form_csrf

from .helpers import address, invite, sign_in_by_mail

KINDS = {p.stem for p in (Path(mail.__file__).parent / "templates" / "mail").glob("*.subject")}
LINK = "https://feedback.example.com/b/acme/sign-in/email?token=t"
BOARD = "https://feedback.example.com/b/acme/"
USER_CONTENT = ("Acme", "Feedback", "Grault")  # the workspace's name, the product's, the inviter's


class Queue:
    def __init__(self):
        self.queued = []

    def enqueue(self, message, key=None):
        self.queued.append(message)


def written(locale: str) -> dict[str, list]:
    queue = Queue()
    mailer = PeopleMail(queue, {"acme": "Acme"}.get)
    mailer.sign_in_link("acme", "ann@example.com", LINK, 15, key="k", board=BOARD, asked=locale)
    sign_in = queue.queued[:]
    for inviter in ("Grault (grault@example.com)", None):
        for role in mail.ROLE_NAMES:
            mailer.invitation("acme", "ann@example.com", role, inviter, LINK, 7, key="i", board=BOARD, asked=locale)
    return {"sign_in": sign_in, "invitation": queue.queued[len(sign_in):]}


@pytest.mark.parametrize("locale", [*i18n.LOCALES, i18n.PSEUDO])
def test_every_kind_of_mail_is_written_in_every_language(locale):
    kinds = written(locale)
    assert set(kinds) == KINDS, "a kind of mail without a sample here"
    direction = i18n.language(locale).direction
    for kind, messages in kinds.items():
        for message in messages:
            assert message.headers["Content-Language"] == locale, kind
            assert f'<html lang="{locale}" dir="{direction}">' in message.html, kind
            if locale == i18n.PSEUDO:
                assert unmarked(message, USER_CONTENT) == [], (kind, message.subject, message.text)


def test_the_language_is_the_first_the_workspace_enabled_else_its_default():
    queue = Queue()
    mailer = PeopleMail(queue, {"acme": "Acme"}.get, languages=lambda slug: {"defaultLocale": "fr", "locales": ["fr", "ja", "de"]})
    for asked, chosen in (("ja", "de"), ("ko", "de"), (None, "de"), ("ko", "ar"), (None, None)):
        mailer.sign_in_link("acme", "ann@example.com", LINK, 15, key="k", board=BOARD, asked=asked, chosen=chosen)
    assert [m.headers["Content-Language"] for m in queue.queued] == ["ja", "de", "de", "fr", "fr"]


# -- end to end ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ws(api, admin_token):
    """A workspace in French by default, in four languages (set before its first mail: the
    people service keeps a workspace's languages a minute)."""
    workspace = create_workspace(api, admin_token)
    workspace.settings(defaultLocale="fr", locales=["en", "fr", "ja", "de"])
    workspace.board("features", "Feature requests")
    return workspace


def last_mail_to(maildir, email: str, count: int):
    return wait_for_mail(maildir, to=email, after=count - 1, timeout=30)


def language_of(message) -> tuple[str, str]:
    found = re.search(r'<html lang="([^"]+)" dir="([^"]+)">', html_of(message))
    assert message["Content-Language"] == found.group(1)
    return found.group(1), found.group(2)


def test_a_sign_in_link_is_in_the_pages_language_else_the_persons_else_the_workspaces(ws, maildir):
    # A new address, from the API without a language: the workspace's default.
    stranger = address("stranger")
    assert ws.api.post(f"{ws.path}/sign-in/email", json={"email": stranger}).status_code == 202
    assert language_of(last_mail_to(maildir, stranger, 1)) == ("fr", "ltr")
    assert_error(ws.api.post(f"{ws.path}/sign-in/email", json={"email": stranger, "locale": "xx"}), 400)

    # From the board's sign-in page in Japanese: the page's language.
    site = Visitor(ws.api.base[:-3], ws.slug)
    page = site.get("/sign-in?lang=ja")
    sent = site.post("/sign-in", {"csrf": form_csrf(page.text, f"/b/{ws.slug}/sign-in"), "email": stranger})
    assert sent.status_code == 200, sent.text
    assert language_of(last_mail_to(maildir, stranger, 2)) == ("ja", "ltr")

    # A person who chose German: theirs, unless the page asked in another enabled language.
    person = address("person")
    session = sign_in_by_mail(ws, maildir, person)
    r = ws.api.patch("/me", key=session["token"], json={"locale": "de"})
    assert r.status_code == 200, r.text
    for asked, expected in ((None, "de"), ("ko", "de"), ("ja", "ja")):
        body = {"email": person, **({"locale": asked} if asked else {})}
        assert ws.api.post(f"{ws.path}/sign-in/email", json=body).status_code == 202
    assert [language_of(last_mail_to(maildir, person, n))[0] for n in (2, 3, 4)] == ["de", "de", "ja"]


def test_an_invitation_is_in_the_invited_persons_language_else_the_inviting_pages_else_the_workspaces(ws, maildir):
    newcomer, other = address("newcomer"), address("other")
    invite(ws, newcomer, "manager")
    assert language_of(last_mail_to(maildir, newcomer, 1)) == ("fr", "ltr")
    r = ws.api.post(f"{ws.path}/members", key=ws.admin_token, json={"email": other, "role": "owner", "locale": "ja"})
    assert r.status_code == 201, r.text
    assert language_of(last_mail_to(maildir, other, 1)) == ("ja", "ltr")

    german = address("german")
    session = sign_in_by_mail(ws, maildir, german)
    assert ws.api.patch("/me", key=session["token"], json={"locale": "de"}).status_code == 200
    r = ws.api.post(f"{ws.path}/members", key=ws.admin_token, json={"email": german, "role": "manager", "locale": "ja"})
    assert r.status_code == 201, r.text
    assert language_of(last_mail_to(maildir, german, 2)) == ("de", "ltr")
