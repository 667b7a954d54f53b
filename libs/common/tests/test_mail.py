"""The mail path: a message composed with the headers a mail needs, handed to a real SMTP server
(aiosmtpd, plain, STARTTLS, implicit TLS), queued durably and delivered once, after an outage
too, by one worker or two. The SMTP servers keep what they take in a Maildir the tests read."""

from __future__ import annotations

import datetime
import email
import email.policy
import ipaddress
import re
import smtplib
import socket
import ssl
import threading
import time
import uuid
from contextlib import contextmanager
from email.utils import parseaddr, parsedate_to_datetime

import pytest
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import AuthResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pymongo import MongoClient

from common.addresses import parse_address, parse_smtp_url
from common.config import load_settings
from devstack import LocalStack, free_port, make_run_stack
from common.mail import (
    FAILED,
    QUEUED,
    SENT,
    Branding,
    MailQueue,
    Mailer,
    Message,
    RetrySchedule,
    compose,
    deliver,
    make_message_id,
)
from testkit.mail import html_of, link_in, messages, smtp_server, text_of, wait_for_mail

SENDER = "Feedback <feedback@mail.example.com>"


def message(to="ann@example.com", **changes) -> Message:
    fields = dict(
        to=to,
        subject="Sign in to Acme",
        text="Open this link to sign in: http://127.0.0.1:8080/b/acme/signin/abc123\nIt works for 15 minutes.\n",
        html='<!DOCTYPE html><html><body><p><a href="http://127.0.0.1:8080/b/acme/signin/abc123">Sign in</a></p></body></html>\n',
        branding=Branding(name="Acme"),
    )
    return Message(**{**fields, **changes})


def eventually(condition, what: str, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


# -- compose ------------------------------------------------------------------------------------


def test_a_message_is_text_and_html_alternatives_with_the_headers_a_mail_needs():
    mail = compose(message(headers={"List-Unsubscribe": "<https://example.com/u/1>"}), SENDER,
                   date=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))
    assert mail.get_content_type() == "multipart/alternative"
    assert [part.get_content_type() for part in mail.iter_parts()] == ["text/plain", "text/html"]
    assert parseaddr(mail["From"]) == ("Acme via Feedback", "feedback@mail.example.com")
    assert mail["To"] == "ann@example.com" and mail["Subject"] == "Sign in to Acme"
    assert mail["Auto-Submitted"] == "auto-generated"
    assert mail["List-Unsubscribe"] == "<https://example.com/u/1>"
    assert parsedate_to_datetime(mail["Date"]) == datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    assert mail["Message-ID"].startswith("<") and mail["Message-ID"].endswith("@mail.example.com>"), "in the sender's domain"
    assert compose(message(), SENDER)["Message-ID"] != mail["Message-ID"]
    assert compose(message(), SENDER, "<fixed@mail.example.com>")["Message-ID"] == "<fixed@mail.example.com>"
    assert text_of(mail) == message().text, "the text as written (common.letters signs it)"
    assert link_in(mail, "http://127.0.0.1:8080/b/acme/signin/") == "http://127.0.0.1:8080/b/acme/signin/abc123"
    assert html_of(mail) == message().html, "the HTML as written (common.letters lays it out)"


def test_the_workspace_name_and_the_subject_are_kept_to_one_line_in_headers():
    branding = Branding(name='Acme <script>alert("x")</script>\r\nBcc: eve@example.com')
    mail = compose(message(branding=branding, subject="Hi\r\nBcc: eve@example.com"), SENDER)
    assert mail["Bcc"] is None, "a line break cannot start a header"
    assert parseaddr(mail["From"])[0] == 'Acme <script>alert("x")</script> Bcc: eve@example.com via Feedback'
    assert mail["Subject"] == "Hi Bcc: eve@example.com"


@pytest.mark.parametrize(
    "to", ["not-an-address", "ann@example.com, eve@example.com", "ann@example.com\r\nBcc: eve@example.com", ""]
)
def test_a_message_to_anything_but_one_address_is_refused(to):
    with pytest.raises(ValueError):
        compose(message(to=to), SENDER)


def test_an_extra_header_cannot_replace_one_compose_sets():
    with pytest.raises(ValueError):
        compose(message(headers={"Subject": "another"}), SENDER)


# -- SMTP_URL and MAIL_FROM ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, host, port, implicit_tls, username, password",
    [
        ("smtp://user:pass@mail.example.com:587", "mail.example.com", 587, False, "user", "pass"),
        ("smtps://user%40example.com:p%3Ass%20w@mail.example.com:465", "mail.example.com", 465, True,
         "user@example.com", "p:ss w"),
        ("smtps://u:p@mail.example.com", "mail.example.com", 465, True, "u", "p"),
        ("smtp://relay.internal:25", "relay.internal", 25, False, None, None),
        ("SMTP://127.0.0.1/", "127.0.0.1", 25, False, None, None),
        ("smtp://[::1]:2525", "::1", 2525, False, None, None),
    ],
)
def test_smtp_urls_name_the_server_the_tls_and_the_decoded_credentials(url, host, port, implicit_tls, username, password):
    server = parse_smtp_url(url)
    assert (server.host, server.port, server.implicit_tls, server.username, server.password) == (
        host, port, implicit_tls, username, password)


@pytest.mark.parametrize(
    "url, reason",
    [
        ("http://mail.example.com", "scheme"),
        ("mail.example.com:25", "scheme"),
        ("smtp://", "no host"),
        ("smtp://mail.example.com:99999", "port"),
        ("smtp://mail.example.com:0", "port"),
        ("smtp://mail.example.com:smtp", "port"),
        ("smtp://user@mail.example.com", "password"),
        ("smtp://:secret@mail.example.com", "password"),
        ("smtp://mail.example.com/inbox", "path"),
        ("smtp://mail.example.com?tls=off", "query"),
    ],
)
def test_a_wrong_smtp_url_is_refused_saying_why(url, reason):
    with pytest.raises(ValueError, match=reason):
        parse_smtp_url(url)


def test_settings_refuse_a_wrong_smtp_url_or_sender_at_load_without_showing_the_password():
    settings = load_settings({"SMTP_URL": "smtps://u:hunter2@mail.example.com", "MAIL_FROM": "Acme Mail <mail@acme.example>"})
    assert (settings.smtp_url, settings.mail_from) == ("smtps://u:hunter2@mail.example.com", "Acme Mail <mail@acme.example>")
    assert "hunter2" not in repr(settings), "a secret"
    assert (load_settings({}).smtp_url, load_settings({}).mail_from) == (None, "Feedback <feedback@localhost>")
    with pytest.raises(SystemExit) as refused:
        load_settings({"SMTP_URL": "https://u:hunter2@mail.example.com"})
    assert "SMTP_URL is invalid: the scheme must be" in str(refused.value) and "hunter2" not in str(refused.value)
    with pytest.raises(SystemExit, match="MAIL_FROM='a@b.example, c@d.example' is invalid"):
        load_settings({"MAIL_FROM": "a@b.example, c@d.example"})


# -- the Mailer against a real SMTP server ------------------------------------------------------


def test_the_mailer_hands_a_message_to_the_server(tmp_path):
    with smtp_server(tmp_path) as server:  # a folder that exists already becomes a Maildir too
        Mailer(server.url, SENDER).send(compose(message(), SENDER))
        got = wait_for_mail(server.folder, to="ann@example.com")
    assert got["X-MailFrom"] == "feedback@mail.example.com" and got["X-RcptTo"] == "ann@example.com"
    assert got["Subject"] == "Sign in to Acme" and got["Auto-Submitted"] == "auto-generated"
    assert link_in(got, "http://127.0.0.1:8080/b/acme/signin/") == "http://127.0.0.1:8080/b/acme/signin/abc123"


def test_list_unsubscribe_goes_out_as_its_plain_url_and_a_non_ascii_subject_still_encoded(tmp_path):
    # A long unbreakable ASCII value is folded by Python's email policy by RFC 2047-encoding it
    # (=?utf-8?q?=3Chttp...?=): mail providers then find no URL (RFC 2369, RFC 8058). Issue 36.
    unsubscribe = "http://127.0.0.1:8080/b/acme/unsubscribe?token=" + "a1B2-_" * 20
    subject = "Dark mode is now « In progress » — ünïcödé, long enough to need folding in its header"
    mail = compose(message(subject=subject, branding=Branding(name="Åcme Straße"),
                           headers={"List-Unsubscribe": f"<{unsubscribe}>",
                                    "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}), SENDER)
    with smtp_server(tmp_path) as server:
        Mailer(server.url, SENDER).send(mail)
        got = wait_for_mail(server.folder, to="ann@example.com")
    [path] = (tmp_path / "new").iterdir()
    raw = path.read_bytes().replace(b"\r\n", b"\n")
    headers = raw.split(b"\n\n", 1)[0]
    lines = headers.split(b"\n")
    assert f"List-Unsubscribe: <{unsubscribe}>".encode() in lines, headers.decode()
    assert b"List-Unsubscribe-Post: List-Unsubscribe=One-Click" in lines
    assert b"=?" not in b"".join(line for line in lines if line.lower().startswith(b"list-"))
    # What still needs encoding is encoded as before: each encoded word at most 75 characters
    # (RFC 2047), each line at most 78 but the URL's (RFC 5322).
    assert got["Subject"] == subject and parseaddr(got["From"])[0] == "Åcme Straße via Feedback"
    raw_subject = re.search(rb"^Subject:.*(?:\n[ \t].*)*", headers, re.MULTILINE).group(0)
    assert headers.isascii() and b"=?utf-8?" in raw_subject, raw_subject
    assert all(len(word) <= 75 for word in re.findall(rb"=\?[^?]+\?[qQbB]\?[^?]*\?=", headers))
    assert all(len(line) <= 78 for line in lines if not line.startswith(b"List-Unsubscribe: <"))
    assert got["List-Unsubscribe"] == f"<{unsubscribe}>"


def test_list_headers_fold_between_their_urls_never_inside_one_and_refuse_a_line_past_998():
    first, second = "https://example.com/u/" + "x" * 70, "mailto:unsubscribe@example.com?subject=" + "y" * 50
    mail = compose(message(headers={"List-Unsubscribe": f"<{first}>, <{second}>"}), SENDER)
    folded = mail.as_bytes().split(b"\n\n", 1)[0]
    assert f"List-Unsubscribe: <{first}>,\n <{second}>".encode() in folded
    assert email.message_from_bytes(mail.as_bytes(), policy=email.policy.default)["List-Unsubscribe"] == f"<{first}>, <{second}>"
    with pytest.raises(ValueError, match="998"):
        compose(message(headers={"List-Unsubscribe": "<https://example.com/" + "z" * 1000 + ">"}), SENDER)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """A certificate authority of the test's own and a certificate it signed for 127.0.0.1 and
    localhost: (server's TLS context, client's TLS context trusting that authority)."""
    folder = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mail test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return server, ssl.create_default_context(cafile=str(folder / "ca.pem"))


class Logins:
    """An aiosmtpd authenticator that takes one user and password and remembers every try."""

    def __init__(self, username: str, password: str):
        self.expected = (username.encode(), password.encode())
        self.tried: list[tuple[bytes, bytes]] = []

    def __call__(self, server, session, envelope, mechanism, auth_data):
        self.tried.append((auth_data.login, auth_data.password))
        return AuthResult(success=(auth_data.login, auth_data.password) == self.expected)


def test_starttls_then_a_login_with_the_decoded_credentials(tmp_path, certificates):
    server_tls, client_tls = certificates
    logins = Logins("ann@example.com", "p:ss w")
    with smtp_server(tmp_path / "mail", tls_context=server_tls, require_starttls=True, authenticator=logins,
                     auth_require_tls=True) as server:
        url = f"smtp://ann%40example.com:p%3Ass%20w@127.0.0.1:{server.port}"
        Mailer(url, SENDER, ssl_context=client_tls).send(compose(message(), SENDER))
        wait_for_mail(server.folder, to="ann@example.com")
        assert logins.tried == [(b"ann@example.com", b"p:ss w")]
        # The server's certificate is verified: against the system's authorities, ours is unknown.
        with pytest.raises(ssl.SSLCertVerificationError):
            Mailer(url, SENDER).send(compose(message(), SENDER))
    assert len(logins.tried) == 1, "no password was sent to an unverified server"


def test_implicit_tls_from_the_first_byte(tmp_path, certificates):
    server_tls, client_tls = certificates
    logins = Logins("u", "p")
    # NOTE: aiosmtpd counts only STARTTLS as TLS for auth_require_tls; this connection is TLS throughout.
    with smtp_server(tmp_path / "mail", ssl_context=server_tls, authenticator=logins, auth_require_tls=False) as server:
        Mailer(f"smtps://u:p@127.0.0.1:{server.port}", SENDER, ssl_context=client_tls).send(compose(message(), SENDER))
        wait_for_mail(server.folder, to="ann@example.com")
    assert logins.tried == [(b"u", b"p")]


def non_loopback_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.123", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if ipaddress.ip_address(address).is_loopback else address


def test_credentials_are_never_sent_unencrypted_except_to_a_loopback_server(tmp_path):
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    logins = Logins("u", "p")
    # A server that offers no STARTTLS and would take a password in the clear.
    with smtp_server(tmp_path / "remote", host=address, authenticator=logins, auth_require_tls=False) as server:
        with pytest.raises(smtplib.SMTPNotSupportedError, match="refusing to send the SMTP password unencrypted"):
            Mailer(f"smtp://u:p@{address}:{server.port}", SENDER).send(compose(message(), SENDER))
        assert logins.tried == [] and messages(server.folder) == []
    with smtp_server(tmp_path / "local", authenticator=logins, auth_require_tls=False) as server:
        Mailer(f"smtp://u:p@127.0.0.1:{server.port}", SENDER).send(compose(message(), SENDER))
        wait_for_mail(server.folder, to="ann@example.com")
    assert logins.tried == [(b"u", b"p")]


# -- the queue and its worker -------------------------------------------------------------------


@pytest.fixture
def queue(database) -> MailQueue:
    client = MongoClient(database, tz_aware=True)
    yield MailQueue(client[f"mail_{uuid.uuid4().hex[:12]}"]["mail"])
    client.close()


@contextmanager
def delivering(queue: MailQueue, smtp_url: str | None, workers: int = 1, schedule: RetrySchedule = RetrySchedule(),
               **options):
    """``workers`` delivery loops on ``queue``, each a thread, for the ``with`` block (``options``:
    deliver's own)."""
    stop = threading.Event()
    threads = [threading.Thread(target=deliver, args=(queue, Mailer(smtp_url, SENDER), SENDER, stop),
                                kwargs={"schedule": schedule, **options}, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
        assert not any(thread.is_alive() for thread in threads), "a delivery loop ends when stopped"


def settled(queue: MailQueue, count: int) -> list[dict]:
    """The queue's documents once ``count`` of them are sent or given up."""

    def finished() -> list[dict] | None:
        documents = list(queue.collection.find())
        return documents if sum(d["state"] != QUEUED for d in documents) >= count else None

    return eventually(finished, f"{count} messages sent or given up")


def test_a_queued_message_is_delivered_and_marked_sent_with_its_message_id_fixed_when_queued(tmp_path, queue):
    with smtp_server(tmp_path / "mail") as server:
        with delivering(queue, server.url):
            queue.enqueue(message(to="Ann <ann@example.com>"))
            got = wait_for_mail(server.folder, to="ann@example.com")
            [document] = settled(queue, 1)
    assert document["state"] == SENT and document["attempts"] == 1 and document["doneAt"] is not None
    assert got["Message-ID"] == make_message_id(document["messageToken"], "mail.example.com")
    assert parsedate_to_datetime(got["Date"]) == document["createdAt"].replace(microsecond=0)
    assert parseaddr(got["From"]) == ("Acme via Feedback", "feedback@mail.example.com")


def test_a_key_enqueued_twice_mails_once(tmp_path, queue):
    with smtp_server(tmp_path / "mail") as server:
        queue.enqueue(message(subject="Invitation 1"), key="invite:1")
        queue.enqueue(message(subject="Invitation 1, again"), key="invite:1")
        queue.enqueue(message(subject="Invitation 2"), key="invite:2")
        queue.enqueue(message(subject="Without a key"))
        queue.enqueue(message(subject="Without a key"))
        with delivering(queue, server.url):
            settled(queue, 4)
            subjects = sorted(m["Subject"] for m in messages(server.folder))
    assert subjects == ["Invitation 1", "Invitation 2", "Without a key", "Without a key"]


def test_a_message_that_cannot_be_sent_is_refused_when_queued(queue):
    with pytest.raises(ValueError):
        queue.enqueue(message(to="nobody"))
    assert queue.collection.count_documents({}) == 0


def test_mail_queued_while_the_smtp_server_is_down_is_retried_and_delivered_when_it_is_back(tmp_path, queue):
    port = free_port()
    with delivering(queue, f"smtp://127.0.0.1:{port}", schedule=RetrySchedule(first=0.2, longest=0.5)):
        queue.enqueue(message())
        failed = eventually(lambda: queue.collection.find_one({"attempts": {"$gte": 2}}), "two failed attempts")
        assert failed["state"] == QUEUED and "Connection refused" in failed["lastError"]
        with smtp_server(tmp_path / "mail", port=port) as server:
            got = wait_for_mail(server.folder, to="ann@example.com")
            [document] = settled(queue, 1)
    assert document["state"] == SENT
    assert got["Message-ID"] == make_message_id(document["messageToken"], "mail.example.com"), "the same Message-ID on every try"


def test_an_unreachable_server_is_tried_again_at_the_first_wait_however_long_it_stays_away(tmp_path, queue):
    # Failures to connect are not the message's: no doubling, so mail leaves soon after the server returns.
    port = free_port()
    with delivering(queue, f"smtp://127.0.0.1:{port}", schedule=RetrySchedule(first=0.2, longest=3600)):
        queue.enqueue(message())
        waiting = eventually(lambda: queue.collection.find_one({"attempts": {"$gte": 5}, "claim": None}), "five failed attempts")
        wait = (waiting["dueAt"] - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
        assert wait <= 0.2, f"the fifth failure waits {wait:.2f}s (doubling would wait 3.2s)"
        with smtp_server(tmp_path / "mail", port=port) as server:
            wait_for_mail(server.folder, to="ann@example.com", timeout=2)
            [document] = settled(queue, 1)
    assert document["state"] == SENT and "Connection refused" in document["lastError"]


def test_a_message_is_given_up_once_its_retries_run_out(queue):
    with delivering(queue, f"smtp://127.0.0.1:{free_port()}", schedule=RetrySchedule(first=0.1, longest=0.2, give_up_after=0.5)):
        queue.enqueue(message())
        [document] = settled(queue, 1)
    assert document["state"] == FAILED and document["attempts"] >= 2 and "Connection refused" in document["lastError"]


class RefusingNobody(Mailbox):
    """A Maildir server that has no mailbox ``nobody@``."""

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("nobody@"):
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def test_a_recipient_the_server_refuses_for_good_is_not_retried(tmp_path, queue):
    folder = tmp_path / "mail"
    refused = []
    with smtp_server(folder, handler=RefusingNobody(folder)) as server:
        with delivering(queue, server.url, schedule=RetrySchedule(first=0.1),
                        on_refused=lambda document, reason: refused.append((document["to"], document["workspace"], reason))):
            queue.enqueue(message(to="nobody@example.com", workspace="acme"))
            queue.enqueue(message(to="ann@example.com", workspace="acme"))
            documents = {d["to"]: d for d in settled(queue, 2)}
    assert [(to, workspace) for to, workspace, _ in refused] == [("nobody@example.com", "acme")], "the caller hears of it"
    assert "550" in refused[0][2]
    assert documents["nobody@example.com"]["state"] == FAILED and documents["nobody@example.com"]["attempts"] == 1
    assert "550" in documents["nobody@example.com"]["lastError"]
    assert documents["ann@example.com"]["state"] == SENT
    assert [m["To"] for m in messages(folder)] == ["ann@example.com"]


def test_two_workers_send_each_message_once(tmp_path, queue):
    with smtp_server(tmp_path / "mail") as server:
        with delivering(queue, server.url, workers=2):
            for n in range(20):
                queue.enqueue(message(to=f"user{n}@example.com"))
            documents = settled(queue, 20)
            got = messages(server.folder)  # each was in the Maildir before it was marked sent
    assert sorted(m["To"] for m in got) == sorted(f"user{n}@example.com" for n in range(20)), "each once"
    assert all(d["state"] == SENT and d["attempts"] == 1 for d in documents), "no message was claimed twice"


def test_a_message_a_dead_worker_held_is_sent_after_its_lease_with_the_same_message_id(tmp_path, queue):
    queue.enqueue(message())
    [held] = queue.claim("a-worker-killed-mid-send", lease=1.0)
    assert queue.claim("another", lease=1.0) == [], "leased to one worker at a time"
    with smtp_server(tmp_path / "mail") as server:
        with delivering(queue, server.url):
            got = wait_for_mail(server.folder, to="ann@example.com")
            [document] = settled(queue, 1)
    assert document["state"] == SENT and document["attempts"] == 2
    assert got["Message-ID"] == make_message_id(held["messageToken"], "mail.example.com")
    queue.retry_at(held, "a-worker-killed-mid-send", document["createdAt"], "late")  # were it to come back
    assert queue.collection.find_one() == document, "only the lease's holder writes an outcome"


def test_without_an_smtp_url_mail_waits_in_the_queue(queue):
    queue.enqueue(message())
    with delivering(queue, None):
        time.sleep(0.5)  # a worker that claimed would have done so by now
    document = queue.collection.find_one()
    assert (document["state"], document["attempts"]) == (QUEUED, 0)


def test_the_queue_has_its_indexes_finished_mail_expiring(queue):
    indexes = queue.collection.index_information()
    assert indexes["key"]["unique"] and indexes["key"]["sparse"], "a key once; messages without one are many"
    assert indexes["done_ttl"]["key"] == [("doneAt", 1)] and indexes["done_ttl"]["expireAfterSeconds"] == 7 * 86400
    assert indexes["state_due"]["key"] == [("state", 1), ("dueAt", 1)]


# -- make run's local SMTP server ---------------------------------------------------------------


def test_a_local_stack_with_a_maildir_gives_every_process_its_smtp_server(tmp_path, monkeypatch):
    monkeypatch.setenv("SMTP_URL", "smtp://relay.example:25")  # the local server wins where it is asked for
    stack = LocalStack(mongodb_uri="mongodb://127.0.0.1:1", kafka_bootstrap="127.0.0.1:2", mail_dir=tmp_path / "mail")
    stack.start_mail()
    try:
        smtp_url = stack.env()["SMTP_URL"]
        assert smtp_url == stack.mail_server.url and smtp_url.startswith("smtp://127.0.0.1:")
        Mailer(smtp_url, SENDER).send(compose(message(), SENDER))
        assert wait_for_mail(tmp_path / "mail", to="ann@example.com")["Subject"] == "Sign in to Acme"
        assert len(list((tmp_path / "mail" / "new").iterdir())) == 1, "a Maildir: one file per message in new/"
    finally:
        stack.stop()
    assert stack.mail_server is None and stack.env()["SMTP_URL"] == "smtp://relay.example:25"


def test_make_run_mails_to_its_maildir_unless_smtp_url_is_set_and_links_lead_to_its_gateway(tmp_path, monkeypatch):
    monkeypatch.setenv("PUBLIC_BASE_URL", "http://elsewhere.example")
    monkeypatch.delenv("SMTP_URL", raising=False)
    stack = make_run_stack(tmp_path, {"GATEWAY_PORT": "9123"})
    assert stack.mail_dir == tmp_path / "mail"
    assert stack.env()["PUBLIC_BASE_URL"] == "http://127.0.0.1:9123", "its own gateway, whatever GATEWAY_PORT says"
    assert make_run_stack(tmp_path, {}).env()["PUBLIC_BASE_URL"] == "http://127.0.0.1:8080"
    monkeypatch.setenv("SMTP_URL", "smtp://relay.example:25")
    relayed = make_run_stack(tmp_path, {"SMTP_URL": "smtp://relay.example:25"})
    assert relayed.mail_dir is None and relayed.env()["SMTP_URL"] == "smtp://relay.example:25"


def test_a_batch_enqueued_again_queues_only_what_is_new(queue):
    first = queue.enqueue_many([(message(to=f"user{n}@example.com"), f"event-1:{n}") for n in range(5)])
    again = queue.enqueue_many([(message(to=f"user{n}@example.com"), f"event-1:{n}") for n in range(7)])
    assert (first, again) == (5, 2)
    assert sorted(d["key"] for d in queue.collection.find()) == sorted(f"event-1:{n}" for n in range(7))


def test_a_workspace_sends_at_most_its_share_per_minute_and_the_rest_waits_uncounted(tmp_path, queue):
    with smtp_server(tmp_path / "mail") as server:
        with delivering(queue, server.url, per_workspace_per_minute=3):
            queue.enqueue_many([(message(to=f"a{n}@example.com", workspace="acme"), f"a{n}") for n in range(5)])
            queue.enqueue_many([(message(to=f"b{n}@example.com", workspace="beta"), f"b{n}") for n in range(2)])
            settled(queue, 5)
            time.sleep(0.5)  # a worker ignoring the limit would send the rest now
            documents = list(queue.collection.find())
    sent = sorted(d["to"] for d in documents if d["state"] == SENT)
    assert sum(to.startswith("a") for to in sent) == 3 and sum(to.startswith("b") for to in sent) == 2
    waiting = [d for d in documents if d["state"] == QUEUED]
    assert len(waiting) == 2 and all(d["attempts"] == 0 and d["claim"] is None for d in waiting), "deferred, not failed"


class CountingSessions(Mailbox):
    """A Maildir server that counts the SMTP sessions that sent it mail."""

    def __init__(self, folder):
        super().__init__(folder)
        self.sessions = set()

    async def handle_DATA(self, server, session, envelope):
        self.sessions.add(id(session))
        return await super().handle_DATA(server, session, envelope)


def test_a_batch_goes_over_one_connection(tmp_path, queue):
    folder = tmp_path / "mail"
    handler = CountingSessions(folder)
    queue.enqueue_many([(message(to=f"user{n}@example.com"), f"k{n}") for n in range(10)])
    with smtp_server(folder, handler=handler) as server:
        with delivering(queue, server.url):
            settled(queue, 10)
    assert len(messages(folder)) == 10 and len(handler.sessions) == 1


def test_an_address_the_standard_parser_trips_over_is_refused_as_not_an_address():
    # Found by the OpenAPI conformance run: this domain literal made the standard library's header
    # parser raise AttributeError, which reached the people service's callers as a 5xx.
    text = "0@[\u00e3\u0089\U000ed804\u00b6\u00fd\u00c5\u00df\U00096627.\u0005G\u0106J\U000cf443\b\u0005\U000a35f1\u00b2"
    with pytest.raises(ValueError, match="not"):
        parse_address(text)
