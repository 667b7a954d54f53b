"""Request bodies the domains service accepts (JSON Schema, strict), and what the document shows.

The service reads any text as ``domain`` and lets :mod:`domains.names` say what is wrong with
it (``SET_DOMAIN``), because it also takes names in other spellings than the canonical one: in
Unicode (IDNA), with surrounding spaces or a final dot. The OpenAPI document shows the body
schema and, beside it, the canonical form (``DOMAIN``: what ``names.normalize`` keeps, in any
case); the conformance test checks that the two agree, and docs/architecture.md lists the other
spellings.
"""

from common.validation import obj, string
from domains.contract import MAX_DOMAIN

SET_DOMAIN = obj({"domain": string(1000, 1)}, required=("domain",))

# Letters, digits and inner hyphens, 1-63 characters a label, at least two labels, the last not
# all digits (then it would read as an address).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
DOMAIN = string(
    MAX_DOMAIN,
    1,
    pattern=rf"^(?:{_LABEL}\.)+(?![0-9]+$){_LABEL}$",
    description=(
        "A host name such as feedback.example.com; a Unicode name is taken too (IDNA-encoded). "
        f"Not an IP address, not the platform's own domain, at most {MAX_DOMAIN} characters IDNA-encoded."
    ),
)
