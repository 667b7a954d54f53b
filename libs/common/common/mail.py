"""The platform's mail: composed once, queued durably, delivered over SMTP.

A service that mails (sign-in links, invitations, notifications) writes a :class:`Message`
from its templates (``common.letters``) and puts it in its own :class:`MailQueue` (a
collection of its own database), inside the request that decides it; its worker runs
:func:`deliver`, which sends each queued message through the :class:`Mailer` of ``SMTP_URL``.
A crash between the request and the send loses nothing: the message waits in the queue, and a
message a killed worker was sending is sent again after its lease, with the same
``Message-ID``, so a receiving server can drop the copy.

``SMTP_URL`` (``common.addresses.parse_smtp_url``): with ``smtp://`` the connection is
upgraded by STARTTLS when the server offers it, and credentials are never sent without TLS,
except to a loopback host; ``smtps://`` speaks TLS from the first byte. Certificates are
verified against the system's authorities (``SSL_CERT_FILE`` names another bundle).
"""

from __future__ import annotations

import logging
import re
import secrets
import smtplib
import ssl
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.utils import format_datetime
from collections import deque
from typing import Callable, Iterable, Mapping

from pymongo import ASCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError, PyMongoError

from common.addresses import parse_address, parse_smtp_url
from common.db import ChangeWaiter, insert_new
from common.retry import run_until_stopped

log = logging.getLogger(__name__)

DEFAULT_ACCENT = "#4f46e5"
PRODUCT = "Feedback"  # mail comes from, and is signed by, "<workspace> via Feedback"

SMTP_TIMEOUT = 20.0  # seconds for each exchange with the SMTP server (connect, each command)

# The queue: how long a claimed message is held by the worker sending it (longer than a send
# can take: several exchanges of SMTP_TIMEOUT each), how long a finished one is kept, and how
# long an idle worker waits on the collection's change stream before it looks again (a retry
# that falls due is found within this; a new message wakes it at once).
LEASE_SECONDS = 120.0
KEEP_DAYS = 7
WAIT_SECONDS = 5.0
# Messages a worker claims at once and sends over one SMTP connection: one query finds them
# (on a server that scans, one scan per batch instead of one per message).
CLAIM_BATCH = 50

QUEUED, SENT, FAILED = "queued", "sent", "failed"


@dataclass(frozen=True)
class Branding:
    """What a workspace's mail looks like."""

    name: str  # the workspace's name: the From display name, the header and signature of every mail
    accent: str = DEFAULT_ACCENT  # the header's colour, #rgb or #rrggbb (anything else: the default)
    logo_url: str | None = None  # an http(s) image shown in the header


@dataclass(frozen=True)
class Message:
    """One mail to one address, as a service decides it."""

    to: str  # one address, optionally with a display name ("Ann <ann@example.com>")
    subject: str
    text: str  # the plain-text part, signature included
    html: str  # the HTML part: a whole document, in the workspace's layout (common.letters)
    branding: Branding  # whose name the mail is sent in
    headers: Mapping[str, str] = field(default_factory=dict)  # extra headers (List-Unsubscribe...)
    # Whose mail it is: the send rate is limited per workspace, and a refusal is reported with it.
    workspace: str | None = None


# -- composing ------------------------------------------------------------------------------

# RFC 2369's list headers and RFC 8058's: angle-bracketed URLs a mail provider reads as written.
URL_LIST_HEADERS = frozenset({"list-help", "list-unsubscribe", "list-unsubscribe-post", "list-subscribe", "list-post",
                              "list-owner", "list-archive"})
MAX_LINE = 998  # RFC 5322: a line of a message holds at most 998 characters (its CRLF aside)


class MailPolicy(EmailPolicy):
    """Python's default email policy, except for the list headers (``URL_LIST_HEADERS``): the
    default folds a value too long for a 78-character line that it cannot break (an unsubscribe
    URL with its token) by RFC 2047-encoding it, ``=?utf-8?q?=3Chttp...?=``, which no mail
    provider reads as a URL. An ASCII list header is written as it is, folded only at the
    whitespace between its URLs (RFC 2369), so a URL stays on one line of up to ``MAX_LINE``
    characters; ``ValueError`` for a longer one. Every other header (a non-ASCII subject or
    name) is folded and encoded as before."""

    def fold(self, name, value):
        verbatim = self._verbatim(name, value)
        return super().fold(name, value) if verbatim is None else verbatim

    def fold_binary(self, name, value):
        verbatim = self._verbatim(name, value)
        return super().fold_binary(name, value) if verbatim is None else verbatim.encode("ascii")

    def _verbatim(self, name: str, value) -> str | None:
        text = str(value)
        if name.lower() not in URL_LIST_HEADERS or not text.isascii():
            return None
        lines = [f"{name}:"]
        for word in text.split():
            if len(lines[-1]) + 1 + len(word) > (self.max_line_length or MAX_LINE) and lines[-1] != f"{name}:":
                lines.append("")  # a continuation line: it starts with the space before the word
            lines[-1] += " " + word
        if any(len(line) > MAX_LINE for line in lines):
            raise ValueError(f"the {name} header holds a URL too long for a line of mail ({MAX_LINE} characters)")
        return self.linesep.join(lines) + self.linesep


MAIL_POLICY = MailPolicy()


def compose(message: Message, sender: str, message_id: str | None = None, *, date: datetime | None = None) -> EmailMessage:
    """The mail ``message`` becomes, from ``sender`` (``MAIL_FROM``): a multipart/alternative
    of its text and its HTML, ``From: "<workspace> via Feedback" <sender's address>``, To,
    Subject, Date (``date``, else now), Message-ID (``message_id``, else a new one in the
    sender's domain), ``Auto-Submitted: auto-generated`` (so out-of-office replies stay quiet),
    and the message's extra headers. ``ValueError`` for an address that is not one, or an extra
    header that repeats one of these."""
    origin = parse_address(sender)
    mail = EmailMessage(policy=MAIL_POLICY)
    mail["From"] = Address(display_name=f"{one_line(message.branding.name)} via {PRODUCT}", username=origin.username,
                           domain=origin.domain)
    mail["To"] = parse_address(message.to)
    mail["Subject"] = one_line(message.subject)
    mail["Date"] = format_datetime(_utc(date or datetime.now(timezone.utc)))
    mail["Message-ID"] = message_id or make_message_id(secrets.token_hex(16), origin.domain)
    mail["Auto-Submitted"] = "auto-generated"
    mail.set_content(message.text)
    mail.add_alternative(message.html, subtype="html")
    # After the parts: making the message multipart moves its Content-* headers (a
    # Content-Language) into its first part.
    for header, value in message.headers.items():
        mail[header] = one_line(value)  # a header the policy allows once refuses a second (ValueError)
        MAIL_POLICY.fold(header, mail[header])  # one that cannot be written refuses now, not when sent (ValueError)
    return mail


def make_message_id(token: str, domain: str) -> str:
    return f"<{token}@{domain}>"


def one_line(text: str) -> str:
    # A header holds one line: a line break in a workspace name or subject would start a header.
    return " ".join(str(text).split())


def _utc(value: datetime) -> datetime:
    # A client without tz_aware reads stored times back naive, in UTC.
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


# -- sending --------------------------------------------------------------------------------


class MailNotConfigured(RuntimeError):
    """No SMTP_URL: nowhere to send mail."""


class Mailer:
    """Sends composed mail to the SMTP server of ``smtp_url`` (``SMTP_URL``; None: none)."""

    def __init__(self, smtp_url: str | None, sender: str, *, ssl_context: ssl.SSLContext | None = None,
                 timeout: float = SMTP_TIMEOUT):
        self.server = parse_smtp_url(smtp_url) if smtp_url else None
        # The envelope's sender (MAIL FROM, where bounces go): MAIL_FROM's address, whatever From says.
        self.envelope_sender = parse_address(sender).addr_spec
        # The authorities TLS trusts: the system's, unless given (tests trust their own certificate).
        self.ssl_context = ssl_context or ssl.create_default_context()
        self.timeout = timeout

    @property
    def configured(self) -> bool:
        return self.server is not None

    def send(self, mail: EmailMessage) -> None:
        """Hand ``mail`` to the server; raises (``smtplib.SMTPException``, ``OSError``) when it
        was not taken, ``MailNotConfigured`` without a server."""
        with self.connect() as client:
            self.hand_over(client, mail)

    def hand_over(self, client: smtplib.SMTP, mail: EmailMessage) -> None:
        """Send ``mail`` over ``client`` (of :meth:`connect`), which may carry several."""
        client.send_message(mail, from_addr=self.envelope_sender)

    def connect(self) -> smtplib.SMTP:
        """A connection to the server, encrypted when it can be and logged in when configured:
        the caller sends (:meth:`hand_over`) and closes it (a ``with`` block quits)."""
        server = self.server
        if server is None:
            raise MailNotConfigured("SMTP_URL is not set")
        if server.implicit_tls:
            client = smtplib.SMTP_SSL(server.host, server.port, timeout=self.timeout, context=self.ssl_context)
        else:
            client = smtplib.SMTP(server.host, server.port, timeout=self.timeout)
        try:
            client.ehlo()
            secure = server.implicit_tls
            if not secure and client.has_extn("starttls"):
                client.starttls(context=self.ssl_context)
                client.ehlo()  # the server's extensions may differ once encrypted (AUTH, typically)
                secure = True
            if server.username is not None:
                if not secure and not server.loopback:
                    raise smtplib.SMTPNotSupportedError(
                        f"{server.host}:{server.port} offers no STARTTLS: refusing to send the SMTP password unencrypted"
                    )
                client.login(server.username, server.password)
        except BaseException:
            client.close()
            raise
        return client


def permanent(error: Exception) -> bool:
    """Whether the server refused this message for good (5xx to its recipient or its data):
    sending it again cannot help. Everything else (a connection, a 4xx, a login) may pass later."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return all(500 <= code < 600 for code, _ in error.recipients.values())
    if isinstance(error, smtplib.SMTPDataError):
        return 500 <= error.smtp_code < 600
    return False


# -- the queue ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetrySchedule:
    """When a message that failed is tried again: ``first`` seconds after the first failure,
    doubling up to ``longest``; given up once the next try would come ``give_up_after``
    seconds after it was queued."""

    first: float = 10.0
    longest: float = 3600.0
    give_up_after: float = 24 * 3600.0

    def wait(self, attempts: int) -> float:
        return min(self.first * 2 ** max(attempts - 1, 0), self.longest)


class MailQueue:
    """Mail waiting to be sent, in ``collection`` (of the calling service's database).

    A document per message: the message itself, its ``state`` (queued, sent, failed), when it
    is next due (``dueAt``: pushed forward by a worker's claim, which is its lease, and by a
    retry's wait), the ``claim`` token of the worker holding it, the token of its Message-ID
    (fixed when queued), and ``doneAt`` once sent or given up, after which the TTL index drops
    it in KEEP_DAYS.
    """

    INDEXES = [
        # A key is enqueued once: a retried request mails once.
        IndexModel([("key", ASCENDING)], unique=True, sparse=True, name="key"),
        IndexModel([("state", ASCENDING), ("dueAt", ASCENDING)], name="state_due"),
        IndexModel([("workspace", ASCENDING), ("state", ASCENDING)], name="workspace_state"),
        IndexModel([("doneAt", ASCENDING)], expireAfterSeconds=KEEP_DAYS * 86400, name="done_ttl"),
    ]

    def __init__(self, collection: Collection):
        self.collection = collection
        self.ensure_indexes()

    def ensure_indexes(self) -> None:
        self.collection.create_indexes(self.INDEXES)

    def enqueue(self, message: Message, key: str | None = None) -> None:
        """Store ``message`` to be sent; a ``key`` already enqueued is not enqueued again.
        ``ValueError`` for a message that cannot be composed (an address that is not one)."""
        try:
            self.collection.insert_one(self._document(message, key))
        except DuplicateKeyError:
            pass  # queued before, by an earlier try of the same request

    def enqueue_many(self, letters: Iterable[tuple[Message, str]]) -> int:
        """Store each ``(message, key)`` whose key was not enqueued before, in one round trip;
        how many were new. A fan-out that is run again (a redelivered event) queues nothing twice."""
        documents = [self._document(message, key) for message, key in letters]
        return len(insert_new(self.collection, documents))

    def withdraw(self, workspace: str, key_pattern: str, until: datetime) -> int:
        """Delete the messages of ``workspace`` queued up to ``until``, still waiting to be sent,
        whose key matches ``key_pattern`` (a regular expression of the caller's own keys); how
        many. One a worker is sending now is sent (its outcome then updates nothing)."""
        return self.collection.delete_many({"workspace": workspace, "state": QUEUED, "createdAt": {"$lte": until},
                                            "key": {"$regex": key_pattern}}).deleted_count

    def forget_address(self, address: str, workspace: str | None = None) -> int:
        """Delete every message to ``address`` (of ``workspace``, or of all), whatever its
        state (a person erased: docs/privacy.md); how many."""
        pattern = f"(^|<){re.escape(address)}(>|$)"
        here = {} if workspace is None else {"workspace": workspace}
        return self.collection.delete_many({"to": {"$regex": pattern, "$options": "i"}, **here}).deleted_count

    def forget_keys(self, key_pattern: str) -> int:
        """Delete every message whose key matches ``key_pattern``, whatever its state (the
        calling service's keys name the person a message was for); how many."""
        return self.collection.delete_many({"key": {"$regex": key_pattern}}).deleted_count

    @staticmethod
    def _document(message: Message, key: str | None) -> dict:
        # Composed once now, so that a message that cannot be (an address that is not one, a
        # header given twice) is refused by the caller that queues it, not later in the worker.
        compose(message, "check@localhost")
        at = _now()
        document = {
            "to": message.to,
            "subject": message.subject,
            "text": message.text,
            "html": message.html,
            "branding": {"name": message.branding.name, "accent": message.branding.accent, "logoUrl": message.branding.logo_url},
            # Pairs, not a document: a header's name may hold a dot, which a field name may not.
            "headers": [[name, value] for name, value in message.headers.items()],
            "workspace": message.workspace,
            "messageToken": secrets.token_hex(16),
            "state": QUEUED,
            "createdAt": at,
            "dueAt": at,
            "attempts": 0,
            "claim": None,
        }
        if key is not None:
            document["key"] = key
        return document

    # The rest is the worker's (deliver): claims, leases and outcomes.

    def claim(self, token: str, lease: float = LEASE_SECONDS, limit: int = CLAIM_BATCH) -> list[dict]:
        """Lease up to ``limit`` of the messages due first to ``token`` for ``lease`` seconds:
        those another worker did not win meanwhile (none if none is due)."""
        at = _now()
        due = {"state": QUEUED, "dueAt": {"$lte": at}}
        # NOTE: a find, then an update that repeats its condition: of two workers that found the
        # same messages, the second matches none of them. (A findAndModify would take one per
        # message, and the local MongoDB stand-in runs every one as a scan of the whole collection.)
        found = [d["_id"] for d in self.collection.find(due, projection={"_id": 1}, sort=[("dueAt", ASCENDING)], limit=limit)]
        if not found:
            return []
        self.collection.update_many(
            {"_id": {"$in": found}, **due},
            {"$set": {"dueAt": at + timedelta(seconds=lease), "claim": token}, "$inc": {"attempts": 1}},
        )
        return list(self.collection.find({"_id": {"$in": found}, "claim": token, "state": QUEUED}).sort("dueAt", ASCENDING))

    def sent(self, document: dict, token: str) -> None:
        self._finish(document, token, {"state": SENT, "doneAt": _now()})

    def retry_at(self, document: dict, token: str, due: datetime, error: str) -> None:
        self._finish(document, token, {"dueAt": due, "claim": None, "lastError": error})

    def defer(self, document: dict, token: str, due: datetime) -> None:
        """Put a claimed message back until ``due`` without counting an attempt (its workspace
        sent its share for now)."""
        self.collection.update_one({"_id": document["_id"], "claim": token},
                                   {"$set": {"dueAt": due, "claim": None}, "$inc": {"attempts": -1}})

    def give_up(self, document: dict, token: str, error: str) -> None:
        self._finish(document, token, {"state": FAILED, "doneAt": _now(), "lastError": error})

    def _finish(self, document: dict, token: str, change: dict) -> None:
        # Only while ``token`` holds the lease: a worker that outlived it leaves the outcome to the next.
        self.collection.update_one({"_id": document["_id"], "claim": token}, {"$set": change})

    @staticmethod
    def message(document: dict) -> Message:
        branding = document["branding"]
        return Message(
            to=document["to"],
            subject=document["subject"],
            text=document["text"],
            html=document["html"],
            branding=Branding(name=branding["name"], accent=branding["accent"], logo_url=branding.get("logoUrl")),
            headers=dict(document.get("headers") or []),
            workspace=document.get("workspace"),
        )


def _now() -> datetime:
    # MongoDB keeps milliseconds: what is compared later is what was stored.
    at = datetime.now(timezone.utc)
    return at.replace(microsecond=at.microsecond // 1000 * 1000)


# -- the worker -----------------------------------------------------------------------------


Refused = Callable[[dict, str], None]


def deliver(queue: MailQueue, mailer: Mailer, sender: str, stop: threading.Event, *,
            schedule: RetrySchedule = RetrySchedule(), lease: float = LEASE_SECONDS,
            per_workspace_per_minute: int | None = None, on_refused: Refused | None = None) -> None:
    """Send what ``queue`` holds through ``mailer``, from ``sender`` (``MAIL_FROM``), until
    ``stop`` is set.

    Due messages are claimed in batches under a ``lease`` of seconds (two workers never send one
    at once: a batch still unsent at half its lease is left for a later claim; one killed
    mid-send leaves its batch to the next after the lease), composed with the
    Message-ID and Date fixed when they were queued (a resend after a crash is recognisably the
    same mail), sent over one connection, and each marked sent as soon as the server took it. A
    send that fails is retried on ``schedule`` (logged), or given up (logged as an error) when
    the schedule ran out, or at once when the server refused it for good; then ``on_refused``
    hears of it (``(document, reason)``: the caller may stop mailing that address). A server
    that cannot be reached (or refuses the login) is no message's fault: the batch waits
    ``schedule.first`` seconds, as the worker does before it tries again, so mail goes out
    within that of the server's return, however long it was away. A workspace
    that sent ``per_workspace_per_minute`` messages in the last minute (counted by this worker)
    waits for the next. Idle, the worker waits on the collection's change stream, so a queued
    message goes out at once. Without SMTP_URL nothing is claimed: mail waits in the queue.
    MongoDB outages are waited out (``common.retry``)."""
    worker = _Delivery(queue, mailer, parse_address(sender).domain, sender, schedule, lease, per_workspace_per_minute, on_refused)
    run_until_stopped(lambda: worker.step(stop), stop, errors=(PyMongoError,), what="mail delivery", log=log)


class _Delivery:
    def __init__(self, queue: MailQueue, mailer: Mailer, domain: str, sender: str, schedule: RetrySchedule, lease: float,
                 per_minute: int | None, on_refused: Refused | None):
        self.queue, self.mailer, self.domain, self.sender, self.schedule = queue, mailer, domain, sender, schedule
        self.lease = lease
        self.per_minute, self.on_refused = per_minute, on_refused
        self.sent_at: dict[str, deque] = {}  # workspace -> when this worker sent its last messages
        self.token = secrets.token_hex(8)
        self.inserts = ChangeWaiter(queue.collection, WAIT_SECONDS, [{"$match": {"operationType": "insert"}}], "mail delivery")
        self.told_unconfigured = False

    def step(self, stop: threading.Event) -> None:
        if not self.mailer.configured:
            if not self.told_unconfigured:
                log.warning("mail delivery: SMTP_URL is not set; mail stays queued until it is")
                self.told_unconfigured = True
            stop.wait(50)
            return
        self.inserts.arm()  # before the claims: a message queued after them wakes it
        while not stop.is_set() and (batch := self.queue.claim(self.token, self.lease)):
            self.send_batch(batch, stop)
        if not stop.is_set():
            self.inserts.wait(stop)  # the database holds the wait: up to WAIT_SECONDS, or until an insert

    def send_batch(self, batch: list[dict], stop: threading.Event) -> None:
        client = None
        # Past half the lease, what is left waits for it to end: a send started now could still
        # be under way when another worker may claim the message.
        until = time.monotonic() + self.lease / 2
        try:
            for place, document in enumerate(batch):
                if stop.is_set() or time.monotonic() > until:
                    return  # the rest of the batch waits for its lease, for the next worker
                if (wait := self._throttled(document.get("workspace"))) is not None:
                    self.queue.defer(document, self.token, _now() + timedelta(seconds=wait))
                    continue
                created = _utc(document["createdAt"])
                if client is None:
                    try:
                        client = self.mailer.connect()
                    except (smtplib.SMTPException, OSError) as ex:
                        self.unreachable(batch[place:], ex)
                        stop.wait(self.schedule.first)
                        return
                try:
                    mail = compose(self.queue.message(document), self.sender,
                                   make_message_id(document["messageToken"], self.domain), date=created)
                    self.mailer.hand_over(client, mail)
                except (smtplib.SMTPException, OSError, ValueError) as ex:
                    if client is not None:  # the connection may be unusable now: a new one for the next
                        _quietly(client.close)
                        client = None
                    self.failed(document, created, ex)
                    continue
                self.queue.sent(document, self.token)
                self._count(document.get("workspace"))
                log.info("mail delivery: sent %r to %s", document["subject"], document["to"])
        finally:
            if client is not None:
                _quietly(client.quit)

    def _throttled(self, workspace: str | None) -> float | None:
        """Seconds until ``workspace`` may send again (None: now)."""
        if not self.per_minute or workspace is None:
            return None
        window = self.sent_at.get(workspace)
        if window is None:
            return None
        horizon = time.monotonic() - 60
        while window and window[0] < horizon:
            window.popleft()
        return window[0] - horizon if len(window) >= self.per_minute else None

    def _count(self, workspace: str | None) -> None:
        if self.per_minute and workspace is not None:
            self.sent_at.setdefault(workspace, deque()).append(time.monotonic())

    def unreachable(self, documents: list[dict], error: Exception) -> None:
        """The server could not be reached (or refused the login): no fault of the messages, so
        they do not back off each on its own; they wait ``schedule.first`` seconds, as the worker
        does before it looks again, and go out soon after the server is back."""
        log.warning("mail delivery: the SMTP server is unreachable (%s: %s); %d message(s) wait %.0fs",
                    type(error).__name__, error, len(documents), self.schedule.first)
        for document in documents:
            self.failed(document, _utc(document["createdAt"]), error, wait=self.schedule.first, quiet=True)

    def failed(self, document: dict, created: datetime, error: Exception, *, wait: float | None = None,
               quiet: bool = False) -> None:
        reason = f"{type(error).__name__}: {error}"
        due = _now() + timedelta(seconds=self.schedule.wait(document["attempts"]) if wait is None else wait)
        if isinstance(error, ValueError) or permanent(error):
            log.error("mail delivery: %r to %s refused, not retried: %s", document["subject"], document["to"], reason)
            self.queue.give_up(document, self.token, reason)
            if self.on_refused is not None and not isinstance(error, ValueError):
                self.on_refused(document, reason)
        elif due > created + timedelta(seconds=self.schedule.give_up_after):
            log.error("mail delivery: %r to %s given up after %d attempts: %s",
                      document["subject"], document["to"], document["attempts"], reason)
            self.queue.give_up(document, self.token, reason)
        else:
            if not quiet:
                log.warning("mail delivery: %r to %s failed (attempt %d), retrying at %s: %s",
                            document["subject"], document["to"], document["attempts"], due.isoformat(), reason)
            self.queue.retry_at(document, self.token, due, reason)



def _quietly(close: Callable[[], object]) -> None:
    try:
        close()
    except (smtplib.SMTPException, OSError):
        pass  # a connection that broke needs no goodbye
