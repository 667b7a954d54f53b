"""Request bodies the companies service accepts (JSON Schema, strict)."""

from common.validation import integer, nullable, obj, string
from common.claims import MAX_SPEND
from companies.contract import COMPANIES_LIMIT, MAX_ATTRIBUTES, MEMBERS_LIMIT, USER_ID

SCALAR = {"type": ["string", "number", "boolean", "null"], "maxLength": 500}
COMPANY = obj(
    {
        "name": string(200, 1, description="the company's name, shown to the team"),
        "monthlySpend": {"type": "number", "minimum": 0, "maximum": MAX_SPEND,
                         "description": "what the company pays a month (MRR), in the workspace's currency, to the cent"},
        "plan": nullable(string(100, 1)),
        "attributes": {"type": "object", "maxProperties": MAX_ATTRIBUTES, "propertyNames": {"maxLength": 100},
                       "additionalProperties": SCALAR, "description": "custom attributes: text, numbers, booleans"},
    },
    required=("name",),
)
MEMBER = {
    **obj({"email": string(320, 3, description="a person's address (a person is made for it if none exists yet)"),
           "userId": string(210, 3, pattern=USER_ID, description="a user as votes name them: person:<id>, sso:<id>")}),
    "minProperties": 1, "maxProperties": 1,
}
COMPANIES_PAGE = integer(1, COMPANIES_LIMIT[1], COMPANIES_LIMIT[0])
MEMBERS_PAGE = integer(1, MEMBERS_LIMIT[1], MEMBERS_LIMIT[0])

# A batch of the companies an import brings (the portability service sends it).
IMPORT = obj(
    {"workspace": string(100, 1), "source": string(20, 1, pattern=r"^[a-z]+$"), "kind": {"enum": ["companies"]},
     "items": {"type": "array", "items": {"type": "object"}, "maxItems": 1000}},
    required=("workspace", "source", "kind", "items"),
)

# A page of a workspace's companies for its export (the portability service asks; paged by id).
EXPORT = obj(
    {"workspace": string(100, 1), "kind": {"enum": ["companies"]}, "after": {"type": ["string", "null"], "maxLength": 300},
     "limit": integer(1, 1000, 500)},
    required=("workspace", "kind"),
)
