"""What each kind of notification says, written from its templates without a platform: the
subject, the text (every word and link) and the escaping of the HTML."""

from __future__ import annotations

import pytest

from common.mail import Branding
from notifications import mail
from notifications.directory import Board
from notifications.tokens import UnsubscribeTokens

BOARD = Board(slug="acme", branding=Branding(name="Acme"), url="https://feedback.example.com/b/acme")
POST = {"_id": "0" * 24, "title": "Dark <mode>"}
PAGE = f"{BOARD.url}/p/{POST['_id']}"


@pytest.fixture(scope="module")
def addresser() -> mail.Addresser:
    return mail.Addresser(UnsubscribeTokens("a-secret-long-enough-for-the-tokens-of-the-tests"))


def written(addresser, letter: mail.Letter):
    return addresser.message(BOARD, letter, "person:p1", "ann@example.com")


def test_a_status_change_says_what_it_was_links_the_post_and_ends_with_why_and_how_to_stop(addresser):
    message = written(addresser, mail.status_changed(BOARD, POST, {"slug": "planned", "name": "Planned"},
                                                     {"slug": "done", "name": "Done"}))
    unsubscribe = message.headers["List-Unsubscribe"].strip("<>")
    assert message.subject == "Dark <mode> is now Done"
    assert message.text == (
        "“Dark <mode>” is now Done (it was Planned).\n\n"
        f"View the post: {PAGE}\n\n"
        "You get this because you follow this post.\n"
        f"Preferences: {BOARD.url}/account/notifications\n"
        f"Unsubscribe from Acme: {unsubscribe}\n\n"
        "-- \nAcme via Feedback\n"
    )
    assert unsubscribe.startswith(f"{BOARD.url}/unsubscribe?token=")
    assert message.headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click" and message.workspace == "acme"
    assert "<p>“Dark &lt;mode&gt;” is now Done (it was Planned).</p>" in message.html
    assert f'<a href="{unsubscribe}">Unsubscribe</a>' in message.html


@pytest.mark.parametrize("team, author, to_yours, opening, why", [
    (True, "Ann", True, "Ann (team) replied to your comment on", "You get this because you wrote the comment it answers."),
    (True, None, False, "The team replied on", "You get this because you follow this post."),
    (False, "Bob", False, "Someone replied on", "You get this because you follow this post."),
])
def test_a_reply_says_who_answered_and_quotes_an_excerpt(addresser, team, author, to_yours, opening, why):
    comment = {"content": "word " * 100 + "\n<b>end</b>", "isTeamMember": team}
    message = written(addresser, mail.reply(BOARD, POST, comment, author, to_your_comment=to_yours))
    assert message.subject == "New reply on Dark <mode>"
    excerpt = ("word " * 100 + "<b>end</b>")[:399] + "…"
    assert message.text.startswith(f"{opening} “Dark <mode>”:\n\n{excerpt}\n\nView the post: {PAGE}\n\n{why}\n")


def test_a_merge_a_shipment_team_activity_and_a_digest_each_say_theirs(addresser):
    into = {"_id": "1" * 24, "title": "Themes"}
    merged = written(addresser, mail.merged(BOARD, POST, into))
    assert merged.subject == "Dark <mode> was merged into Themes"
    assert merged.text.startswith("“Dark <mode>” was merged into “Themes”: your vote counts there now, and you follow it "
                                  f"instead.\n\nView the post: {BOARD.url}/p/{into['_id']}\n\n")

    one = written(addresser, mail.shipped(BOARD, {"title": "Spring"}, [POST]))
    several = written(addresser, mail.shipped(BOARD, {"title": "Spring"}, [POST, into]))
    assert (one.subject, several.subject) == ("Shipped: Dark <mode>", "Shipped: 2 posts you follow")
    assert several.text.startswith("Acme shipped what you asked for: Spring.\n\n• “Dark <mode>”\n\n• “Themes”\n\n"
                                   f"Read the changelog: {BOARD.url}/changelog\n\nYou get this because you follow these posts.\n")
    assert "You get this because you follow this post.\n" in one.text

    team = written(addresser, mail.team_activity(BOARD, "awaiting_moderation", POST, "Please  look"))
    assert team.subject == "Awaiting moderation: Dark <mode>"
    assert team.text.startswith(f"Awaiting moderation: “Dark <mode>”.\n\nPlease look\n\nView the post: {PAGE}\n\n"
                                "You get this as a member of the team; choose a daily or weekly digest in your preferences.\n")
    bare = written(addresser, mail.team_activity(BOARD, "new_post", POST, None))
    assert bare.text.startswith(f"New post: “Dark <mode>”.\n\nView the post: {PAGE}\n\n")

    digest = written(addresser, mail.digest(BOARD, [{"kind": "new_post", "title": "A", "postId": "2" * 24},
                                                    {"kind": "new_comment", "title": "B", "postId": "3" * 24}]))
    assert digest.subject == "Digest: 2 updates on Acme"
    assert digest.text.startswith(f"2 updates on Acme's board:\n\n• New post: “A” {BOARD.url}/p/{'2' * 24}\n\n"
                                  f"• New comment: “B” {BOARD.url}/p/{'3' * 24}\n\nOpen the board: {BOARD.url}\n\n"
                                  "You get this digest as a member of the team.\n")
    single = written(addresser, mail.digest(BOARD, [{"kind": "new_post", "title": "A", "postId": "2" * 24}]))
    assert single.subject == "Digest: 1 update on Acme"
