"""Response shapes of the notifications service, as the OpenAPI document names them."""

from common.ids import iso


def follow(post_id: str, following: bool) -> dict:
    return {"postId": post_id, "following": following}


def preferences(slug: str, choices: dict, team: bool) -> dict:
    return {"workspace": slug, **choices, "team": team}


def suppression(doc: dict) -> dict:
    return {"address": doc["address"], "reason": doc["reason"], "at": iso(doc["at"])}


def subscription_requested(slug: str, address: str) -> dict:
    """The answer to a subscription, the same whether the address was subscribed before or not."""
    return {"workspace": slug, "email": address,
            "message": "If this address is not subscribed yet, a link to confirm the subscription was emailed to it."}


def subscription(slug: str, address: str, subscribed: bool) -> dict:
    return {"workspace": slug, "email": address, "subscribed": subscribed}


def subscriber(doc: dict) -> dict:
    return {"email": doc["address"], "state": doc["state"], "createdAt": iso(doc["createdAt"]),
            "confirmedAt": iso(doc.get("confirmedAt")), "person": bool(doc.get("personId"))}
