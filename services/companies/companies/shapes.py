"""Response shapes of the companies service, as the OpenAPI document names them."""

from common.ids import iso
from common.money import from_cents


def company(doc: dict) -> dict:
    return {
        "id": doc["companyId"],
        "name": doc["name"],
        "monthlySpend": from_cents(doc["spendCents"]),
        "plan": doc.get("plan"),
        "attributes": doc.get("attributes") or {},
        "createdAt": iso(doc["createdAt"]),
        "updatedAt": iso(doc["updatedAt"]),
    }


def membership(user_id: str, companies: list[str]) -> dict:
    return {"userId": user_id, "companies": companies}
