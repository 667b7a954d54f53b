"""What an SSO token may say of its user besides who they are: the companies they belong to, in
the shape identify calls use (``companies: [{id, name, monthlySpend, plan}]``). The workspaces
service checks it with the token; the companies service keeps it (docs/services/companies.md,
"From an SSO token")."""

from __future__ import annotations

from common.validation import check

COMPANY_ID = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,99}$"  # the workspace's own id for a company
MAX_COMPANIES = 50  # companies one user belongs to (what one vote adds to a post stays bounded)
MAX_SPEND = 10**12  # a month's spend above a trillion is a typo
# Users a company can have as members, as votes name them (common.auth): signed-in persons, SSO
# users, scoped API keys' agents. Anonymous visitors and manager keys belong to none.
MEMBER_KINDS = ("person", "sso", "agent")
MEMBER_PREFIXES = tuple(f"{kind}:" for kind in MEMBER_KINDS)
MEMBER_USER_ID = rf"^({'|'.join(MEMBER_KINDS)}):[^\s]{{1,200}}$"

# Other fields of an item (Canny's ``created``, ``customFields``...) are allowed and ignored.
COMPANIES = {
    "type": "array",
    "maxItems": MAX_COMPANIES,
    "items": {
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"type": "string", "pattern": COMPANY_ID},
            "name": {"type": "string", "minLength": 1, "maxLength": 200},
            "monthlySpend": {"type": "number", "minimum": 0, "maximum": MAX_SPEND},
            "plan": {"type": ["string", "null"], "maxLength": 100},
        },
    },
}


def companies_claim(claims: dict) -> list[dict] | None:
    """The token's ``companies`` (only the fields kept), or None when it has none; BadRequest
    naming what is wrong with one."""
    if "companies" not in claims:
        return None
    listed = check(claims["companies"], COMPANIES)
    return [{k: c[k] for k in ("id", "name", "monthlySpend", "plan") if k in c} for c in listed]
