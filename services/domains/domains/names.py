"""Custom domain names: normalise what a customer typed, refuse what cannot be one."""

from __future__ import annotations

import ipaddress
import re

from common.errors import BadRequest

from domains.contract import MAX_DOMAIN, MAX_NAME, TXT_PREFIX  # noqa: F401 - MAX_NAME is this module's too
LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def _invalid(reason: str) -> BadRequest:
    return BadRequest(f"field 'domain' {reason}")


def normalize(raw: str) -> str:
    """Lower-case ASCII (IDNA) form of a host name, without the final dot.

    Raises BadRequest for anything that is not a host name: schemes, paths, ports, IP
    addresses, wildcards, empty or over-long labels, names too long for the TXT record.
    """
    name = raw.strip().rstrip(".").lower()
    if not name:
        raise _invalid("must not be empty")
    if _is_ip(name):
        raise _invalid("must be a host name, not an IP address")
    if any(c in name for c in "/:@?#") or any(c.isspace() for c in name):
        raise _invalid("must be a bare host name such as feedback.example.com (no scheme, port or path)")
    try:
        # Python's `idna` codec (IDNA 2003 with nameprep): "Bücher.example" -> "xn--bcher-kva.example".
        name = name.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise _invalid("is not a valid domain name: a label is empty, longer than 63 characters or not allowed by IDNA") from None
    if len(name) > MAX_DOMAIN:
        raise _invalid(f"must be at most {MAX_DOMAIN} characters once IDNA-encoded (so {TXT_PREFIX}.<domain> fits in DNS)")
    labels = name.split(".")
    if len(labels) < 2:
        raise _invalid("must be a fully qualified name with at least two labels, such as feedback.example.com")
    bad = next((label for label in labels if not LABEL.match(label)), None)
    if bad is not None:
        raise _invalid(f"has an invalid label '{bad}' (letters, digits and inner hyphens, 1-63 characters)")
    if labels[-1].isdigit():
        raise _invalid("must end in a top-level domain, not a number")
    return name


def within(name: str, zone: str) -> bool:
    """Whether ``name`` is ``zone`` or one of its subdomains."""
    return name == zone or name.endswith("." + zone)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
        return True
    except ValueError:
        return False
