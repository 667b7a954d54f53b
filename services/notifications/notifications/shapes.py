"""Response shapes of the notifications service, as the OpenAPI document names them."""

from common.ids import iso


def follow(post_id: str, following: bool) -> dict:
    return {"postId": post_id, "following": following}


def preferences(slug: str, choices: dict, team: bool) -> dict:
    return {"workspace": slug, **choices, "team": team}


def suppression(doc: dict) -> dict:
    return {"address": doc["address"], "reason": doc["reason"], "at": iso(doc["at"])}
