"""Events the portability service consumes: a person erased (feedback.people,
``person.erased``), whose kept exports lose their file (portability.erasure)."""

from __future__ import annotations

from common.consumer import only
from portability.contract import CONSUMES, PERSON_ERASED


def handlers(context) -> dict:
    return {topic: only((PERSON_ERASED,), lambda event: context.erasure.erase(event["data"])) for topic in CONSUMES}
