"""What the companies service owns, publishes and consumes."""

from common.auth import ACTOR_SCHEMA
from common.claims import MAX_COMPANIES, MEMBER_USER_ID
from common.validation import TEXT, TIMESTAMP, array, nullable, shape

TOPIC = "feedback.companies"
# The companies an SSO token says its user belongs to (people: user.companies_claimed).
CONSUMES = ("feedback.people",)
COMPANIES_CLAIMED = "user.companies_claimed"
PERSON_ERASED = "person.erased"  # people.privacy: their memberships go

COMPANY_UPDATED = "company.updated"
COMPANY_DELETED = "company.deleted"
MEMBERSHIP_CHANGED = "membership.changed"

MONEY = {"type": "number", "minimum": 0}
COMPANY = shape(
    {
        "id": TEXT,  # the workspace's own id for the company (its CRM's, its billing system's)
        "name": TEXT,
        "monthlySpend": MONEY,  # in the workspace's currency (one per workspace; nothing converts)
        "plan": nullable(TEXT),
        "attributes": {"type": "object"},
        "createdAt": TIMESTAMP,
        "updatedAt": TIMESTAMP,
    }
)

# Every event on feedback.companies and the JSON schema of its ``data``. A membership event
# carries a user's whole list of companies, so a consumer that applies the latest one per user
# is right whatever it missed before.
EVENTS = {
    COMPANY_UPDATED: shape({"company": COMPANY, "actor": ACTOR_SCHEMA}),
    COMPANY_DELETED: shape({"company": shape({"id": TEXT, "name": TEXT}), "actor": ACTOR_SCHEMA}),
    MEMBERSHIP_CHANGED: shape({"userId": TEXT, "companies": array(TEXT), "actor": ACTOR_SCHEMA}),
}

# A user as the posts service counts votes (``person:<id>``, ``sso:<id>``, ``agent:<id>``).
USER_ID = MEMBER_USER_ID
MAX_ATTRIBUTES = 50  # custom attributes of one company
MAX_COMPANIES_PER_USER = MAX_COMPANIES  # bounds what one vote adds to a post's revenue
COMPANIES_LIMIT = (50, 200)  # one page of companies (default, maximum)
MEMBERS_LIMIT = (100, 500)  # one page of a company's members (default, maximum)
