"""Response shape of the domain configuration, as the OpenAPI document names it
(``DomainConfiguration``; its JSON schema is ``contract.CONFIGURATION``)."""

from common.ids import iso
from domains import contract
from domains.dns_check import txt_name


def records(domain: str, token: str, cname_target: str) -> list[dict]:
    """What the customer creates at their DNS provider."""
    return [
        {"type": "txt", "name": txt_name(domain), "value": token},
        {"type": "cname", "name": domain, "value": cname_target},
    ]


def configuration(doc: dict | None, cname_target: str) -> dict:
    if doc is None or doc.get("status", contract.NONE) == contract.NONE:
        return none(cname_target)
    return {
        "domain": doc["domain"],
        "cnameTarget": cname_target,
        "status": doc["status"],
        "records": records(doc["domain"], doc["token"], cname_target),
        "errors": list(doc.get("errors", [])),
        "verifiedAt": iso(doc.get("verifiedAt")),
    }


def none(cname_target: str, domain: str | None = None) -> dict:
    return {"domain": domain, "cnameTarget": cname_target, "status": contract.NONE, "records": [], "errors": [], "verifiedAt": None}
