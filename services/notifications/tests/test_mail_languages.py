"""Each reader's mail in their language (docs/languages.md): a person's own choice, else the
workspace's default; an address subscribed to the changelog in the language of the page it
subscribed from. First without a platform, every kind in every locale (and, in the
pseudo-locale, no word left out of the catalogs); then end to end, through a real SMTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from common import i18n
from common.mail import Branding
from notifications import mail
from notifications.directory import Board
from notifications.subscriptions import ChangelogLetters
from notifications.tokens import SubscriptionTokens, UnsubscribeTokens
from testkit.api import assert_error, create_workspace, wait_for
from testkit.mail import html_of, unmarked, link_in, messages

from services.web.tests.helpers import Visitor, form_csrf

from .helpers import Person, create_post, set_status, wait_for_notification

SECRET = "a-secret-long-enough-for-the-tokens-of-the-tests"
BOARD = Board(slug="acme", branding=Branding(name="Acme"), url="https://feedback.example.com/b/acme")
KINDS = {p.stem for p in (Path(mail.__file__).parent / "templates" / "mail").glob("*.subject")}

# What the samples' readers wrote or named (user content: shown as written in every language).
POST = {"_id": "0" * 24, "title": "Zorbix"}
INTO = {"_id": "1" * 24, "title": "Quuxel"}
ENTRY = {"id": "e1", "slug": "wibble", "title": "Wibble", "content": "Blorp **snarf**."}
OPEN, PLANNED, IN_PROGRESS = ({"slug": "open", "name": "Open"}, {"slug": "planned", "name": "Planned"},
                              {"slug": "in-progress", "name": "In progress"})
USER_CONTENT = ("Zorbix", "Quuxel", "Wibble", "Blorp", "snarf", "Acme", "Feedback", "Grault")


def samples(addresser: mail.Addresser, letters: ChangelogLetters, locale: str) -> dict[str, list]:
    """Every kind of mail this service sends, each in its variants, written in ``locale``."""
    to = lambda letter: addresser.message(BOARD, letter, "person:p1", "ann@example.com", locale)  # noqa: E731
    lines = [{"kind": k, "title": "Zorbix", "postId": "2" * 24} for k in mail.TEAM_HEADLINES]
    return {
        "status_changed": [to(mail.status_changed(BOARD, POST, OPEN, PLANNED)),
                           to(mail.status_changed(BOARD, POST, None, IN_PROGRESS))],
        "reply": [to(mail.reply(BOARD, POST, {"content": "Blorp", "isTeamMember": team}, author, to_your_comment=yours))
                  for team, author in ((True, "Grault"), (True, None), (False, "Grault")) for yours in (True, False)],
        "merged": [to(mail.merged(BOARD, POST, INTO))],
        "shipped": [to(mail.shipped(BOARD, ENTRY, [POST])), to(mail.shipped(BOARD, ENTRY, [POST, INTO]))],
        "team_activity": [to(mail.team_activity(BOARD, kind, POST, detail))
                          for kind in mail.TEAM_HEADLINES for detail in ("Blorp", None)],
        "digest": [to(mail.digest(BOARD, lines[:1])), to(mail.digest(BOARD, lines))],
        "changelog_confirm": [letters.confirmation(BOARD, "ann@example.com", "n1", locale)],
        "changelog_entry": [letters.entry(BOARD, ENTRY, [POST], "ann@example.com", locale),
                            letters.entry(BOARD, ENTRY, [], "ann@example.com", locale)],
    }


@pytest.fixture(scope="module")
def writers():
    return mail.Addresser(UnsubscribeTokens(SECRET)), ChangelogLetters(SubscriptionTokens(SECRET, 7 * 86400))


@pytest.mark.parametrize("locale", [*i18n.LOCALES, i18n.PSEUDO])
def test_every_kind_of_mail_is_written_in_every_language(writers, locale):
    written = samples(*writers, locale)
    assert set(written) == KINDS, "a kind of mail without a sample here"
    language = i18n.language(locale)
    for kind, variants in written.items():
        for message in variants:
            assert message.headers["Content-Language"] == locale, kind
            assert f'<html lang="{locale}" dir="{language.direction}">' in message.html, kind
            if language.direction == "rtl":
                assert 'text-align:right' in message.html and 'text-align:left' not in message.html, kind
            if locale == i18n.PSEUDO:
                assert unmarked(message, USER_CONTENT) == [], (kind, message.subject, message.text)


def test_a_default_status_name_is_the_catalogs_and_a_teams_own_stays_as_written(writers):
    addresser, _letters = writers
    own = {"slug": "shipped", "name": "<Done> 100%"}
    message = addresser.message(BOARD, mail.status_changed(BOARD, POST, PLANNED, own), "person:p1", "a@example.com", i18n.PSEUDO)
    assert "&lt;Done&gt; 100%" in message.html and "<Done>" not in message.html, "a team's own name is escaped, not markup"
    assert i18n.pseudo("Planned") in message.text


def test_a_board_mails_a_persons_choice_only_among_the_workspaces_languages():
    board = Board(slug="acme", branding=Branding(name="Acme"), url="https://x", default_locale="fr", locales=("fr", "ja"))
    assert (board.locale("ja"), board.locale("de"), board.locale(None), board.locale(i18n.PSEUDO)) == ("ja", "fr", "fr", i18n.PSEUDO)


# -- end to end ---------------------------------------------------------------------------------

def translated(locale: str, message: str, **values) -> str:
    with i18n.using(locale):
        return i18n.gettext(message, **values)


def catalog_has(locale: str, message: str) -> bool:
    return i18n.language(locale).translations.gettext(message) != message


@pytest.fixture(scope="module")
def ws(api, admin_token):
    workspace = create_workspace(api, admin_token)
    workspace.board("features", "Feature requests")
    return workspace


def mailed(maildir, email: str, subject_part: str = "") -> list:
    """The mails to ``email`` whose subject holds ``subject_part``, once there is one (the
    changelog's confirmation is no notification: it carries no List-Unsubscribe)."""
    return wait_for(lambda: [m for m in messages(maildir)
                             if m["To"].addresses[0].addr_spec == email and subject_part in str(m["Subject"])],
                    timeout=30, what=f"mail '{subject_part}' to {email}")


def chooses(person: Person, locale: str) -> None:
    r = person.ws.api.patch("/me", key=person.token, json={"locale": locale})
    assert r.status_code == 200 and r.json()["locale"] == locale, r.text


def test_a_status_change_reaches_each_follower_in_their_own_language(ws, maildir):
    author, japanese, arabic = Person(ws, maildir, "author"), Person(ws, maildir, "japanese"), Person(ws, maildir, "arabic")
    chooses(japanese, "ja")
    chooses(arabic, "ar")
    post = create_post(ws, author, "Offline mode")
    for voter in (japanese, arabic):
        assert voter.call("POST", f"/posts/{post['id']}/vote").status_code in (200, 201)
    set_status(ws, post["id"], "in-progress")

    [english] = wait_for_notification(maildir, author.email, "Offline mode")
    [in_japanese] = wait_for_notification(maildir, japanese.email, "Offline mode")
    [in_arabic] = wait_for_notification(maildir, arabic.email, "Offline mode")
    assert english["Subject"] == "Offline mode is now In progress" and english["Content-Language"] == "en"
    assert '<html lang="en" dir="ltr">' in html_of(english)

    # The Japanese follower's mail went through the Japanese catalog: its subject is the one the
    # catalog writes (English words until it is translated, then not).
    subject = "%(title)s is now %(status)s"
    expected = translated("ja", subject, title="Offline mode", status=translated("ja", "In progress"))
    assert in_japanese["Subject"] == expected and in_japanese["Content-Language"] == "ja"
    assert '<html lang="ja" dir="ltr">' in html_of(in_japanese)
    if catalog_has("ja", subject):
        assert in_japanese["Subject"] != english["Subject"]

    assert in_arabic["Content-Language"] == "ar" and '<html lang="ar" dir="rtl">' in html_of(in_arabic)
    assert "text-align:right" in html_of(in_arabic)


def test_the_changelog_reaches_an_address_in_its_pages_language_and_a_person_in_theirs(ws, maildir):
    reader = f"reader-{ws.slug}@example.com"
    assert_error(ws.api.post(f"{ws.path}/changelog/subscriptions", json={"email": reader, "locale": "xx"}), 400)
    # The board's form, on a page in German.
    visitor = Visitor(ws.api.base[:-3], ws.slug)
    page = visitor.get("/changelog?lang=de")
    action = f"/b/{ws.slug}/changelog/subscribe"
    r = visitor.post("/changelog/subscribe", {"csrf": form_csrf(page.text, action), "action": "email", "email": reader},
                     allow_redirects=False)
    assert r.status_code == 303, r.text
    [confirmation] = mailed(maildir, reader)
    assert confirmation["Content-Language"] == "de" and '<html lang="de"' in html_of(confirmation)
    token = link_in(confirmation, "http").split("token=", 1)[1]
    assert ws.api.post(f"{ws.path}/changelog/subscriptions/confirm", json={"token": token}).status_code == 200

    korean = Person(ws, maildir, "korean")
    chooses(korean, "ko")
    assert korean.call("PUT", "/me/changelog-subscription", json={"subscribed": True}).status_code == 200
    r = ws.api.post(f"{ws.path}/changelogs", key=ws.key, json={"title": "Spring release", "slug": "spring",
                                                                "content": "New things.", "publish": True})
    assert r.status_code == 201, r.text
    [entry] = mailed(maildir, reader, "Spring release")
    [theirs] = mailed(maildir, korean.email, "Spring release")
    assert entry["Content-Language"] == "de" and theirs["Content-Language"] == "ko"

