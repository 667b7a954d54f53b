"""What the people service's mail says, written from its templates without a platform."""

from __future__ import annotations

from people.mail import PeopleMail

LINK = "https://feedback.example.com/b/acme/sign-in/email?token=t&next=/b/acme"
BOARD = "https://feedback.example.com/b/acme/"


class Queue:
    def __init__(self):
        self.queued = []

    def enqueue(self, message, key=None):
        self.queued.append((message, key))


def test_a_sign_in_link_says_where_it_signs_in_for_how_long_and_why_it_came():
    queue = Queue()
    PeopleMail(queue, {"acme": "Acme & Co"}.get).sign_in_link("acme", "ann@example.com", LINK, 15, key="k", board=BOARD)
    [(message, key)] = queue.queued
    assert (message.to, message.subject, key) == ("ann@example.com", "Sign in to Acme & Co", "sign-in:k")
    assert message.text == (
        f"Sign in to Acme & Co's feedback board:\n\n{LINK}\n\nThe link works once, for 15 minutes.\n\n"
        f"You got this because this address was entered on the sign-in page of Acme & Co's feedback board ({BOARD}). "
        "If that was not you, ignore this message: nothing happens without the link.\n\n-- \nAcme & Co via Feedback\n"
    )
    assert '<p><a href="https://feedback.example.com/b/acme/sign-in/email?token=t&amp;next=/b/acme">Sign in</a></p>' in message.html
    assert "<p>Sign in to Acme &amp; Co's feedback board:</p>" in message.html


def test_an_invitation_names_the_person_who_sent_it_or_else_the_workspace_invites():
    queue = Queue()
    mailer = PeopleMail(queue, {"acme": "Acme & Co"}.get)
    mailer.invitation("acme", "ann@example.com", "owner", "Bob <b> (bob@example.com)", LINK, 7, key="i1", board=BOARD)
    mailer.invitation("acme", "ann@example.com", "manager", None, LINK, 7, key="i2", board=BOARD)
    [(named, key), (unnamed, _)] = queue.queued
    assert (named.subject, key) == ("Join Acme & Co on Feedback", "invitation:i1")
    assert named.text.startswith(f"Bob <b> (bob@example.com) invited you to join Acme & Co's feedback team as owner.\n\n"
                                 f"Accept the invitation:\n{LINK}\n\nThe link works once, for 7 days.\n\n"
                                 "Sent by the feedback platform on behalf of Bob <b> (bob@example.com), from Acme & Co's")
    assert "<p>Bob &lt;b&gt; (bob@example.com) invited you" in named.html
    # Nobody to name (the operator, the operator's keys): the workspace invites, in its own name.
    assert unnamed.subject == "Join Acme & Co on Feedback"
    assert unnamed.text.startswith(f"You're invited to join Acme & Co's feedback team as manager.\n\n"
                                   f"Accept the invitation:\n{LINK}\n\nThe link works once, for 7 days.\n\n"
                                   f"Sent by the feedback platform for Acme & Co's feedback board ({BOARD}). If you did not "
                                   "expect it, ignore this message: nothing happens unless you accept.\n")
    assert "<p>You're invited to join Acme &amp; Co's feedback team as manager.</p>" in unnamed.html
    for text in (unnamed.text, unnamed.html):
        assert "Operator" not in text and "The team" not in text and "on behalf of" not in text


def test_an_invitation_from_a_workspace_without_a_name_calls_it_by_its_slug():
    queue = Queue()
    PeopleMail(queue, lambda slug: None).invitation("acme", "ann@example.com", "owner", None, LINK, 7, key="i", board=BOARD)
    [(message, _)] = queue.queued
    assert message.subject == "Join acme on Feedback"
    assert message.text.startswith("You're invited to join acme's feedback team as owner.")
