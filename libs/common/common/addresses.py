"""Addresses as the platform reads them: a mail address (``MAIL_FROM``, a recipient, an address
a person signs in with) and the SMTP server of ``SMTP_URL``.

Parsing only, on the standard library alone: the settings check these values when they are
loaded (``common.config``), before anything that sends mail is imported.

``SMTP_URL`` forms (:func:`parse_smtp_url`):

- ``smtp://user:pass@host:587``: STARTTLS when the server offers it;
- ``smtps://user:pass@host:465``: TLS from the first byte;
- ``smtp://host:25``: no credentials (a relay that trusts the network).

User and password are percent-decoded. How each is used (when credentials may be sent, which
authorities TLS trusts) is ``common.mail.Mailer``'s.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from email.errors import HeaderParseError
from email.headerregistry import Address, HeaderRegistry
from urllib.parse import unquote, urlsplit

SMTP_PORTS = {"smtp": 25, "smtps": 465}


def parse_address(text: str) -> Address:
    """The one address ``text`` holds (``ann@example.com`` or ``Ann <ann@example.com>``);
    ``ValueError`` for anything else: no domain, several addresses, a line break."""
    try:
        header = HeaderRegistry()("To", text)
    # AttributeError: the standard library's parser trips over some control characters in a
    # domain literal ("0@[\x05]") instead of reporting a defect.
    except (ValueError, HeaderParseError, AttributeError) as ex:
        raise ValueError(f"{text!r} is not an email address ({ex})") from None
    if header.defects or len(header.addresses) != 1 or not header.addresses[0].domain:
        raise ValueError(f"{text!r} is not one email address")
    return header.addresses[0]


def normalize_address(text: str) -> str:
    """The address ``text`` holds as it is stored and compared: ``user@domain`` in lower case,
    without a display name; ``ValueError`` as :func:`parse_address`."""
    return parse_address(text.strip()).addr_spec.lower()


@dataclass(frozen=True)
class SmtpServer:
    """Where ``SMTP_URL`` says mail goes."""

    host: str
    port: int
    implicit_tls: bool  # smtps://: TLS from the first byte
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_smtp_url(url: str) -> SmtpServer:
    """The server ``url`` names; ``ValueError`` saying what is wrong (never echoing the password)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in SMTP_PORTS:
        raise ValueError("the scheme must be smtp:// (STARTTLS when offered) or smtps:// (implicit TLS)")
    try:
        host, port = parts.hostname, parts.port
    except ValueError as ex:  # a port that is not a number from 0 to 65535
        raise ValueError(f"the port is invalid ({ex})") from None
    if not host:
        raise ValueError("it names no host")
    if port == 0:
        raise ValueError("the port is invalid (0)")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("it takes no path, query or fragment: smtp[s]://[user:password@]host[:port]")
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    if (username is None) != (password is None):
        raise ValueError("a user needs a password, and a password a user")
    return SmtpServer(host=host, port=port or SMTP_PORTS[scheme], implicit_tls=scheme == "smtps",
                      username=username, password=password)


def address_digest(secret: str, address: str) -> str:
    """A keyed digest of an address (HMAC-SHA256 with the platform's ``INTERNAL_SECRET``), by
    which a service finds what it keeps under an address that is being erased, without the
    address itself travelling in the erasure's event (``person.erased``, docs/privacy.md).
    Keyed, so that nobody without the secret can test a guessed address against it."""
    import hashlib
    import hmac

    return hmac.new(secret.encode(), normalize_address(address).encode(), hashlib.sha256).hexdigest()
