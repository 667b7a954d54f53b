"""``Idempotency-Key`` on POST, after the IETF httpapi draft: a retry with the same key and
the same body answers the first response again and changes nothing.

Every service app has this middleware; it acts only on POST requests that carry the header.
A key is scoped to the caller (the identity the gateway signed), the method and the path,
and is remembered with its answer for ``IDEMPOTENCY_SECONDS`` (24 h by default) in the
service's own database. The same key with another body is a 422; a retry while the first
request is still being processed is a 409 with Retry-After. Answers of 5xx are not kept, so
a request that failed for want of the database can be retried under the same key.

The key is claimed before the request runs and its answer stored after the write committed:
a process that dies between the two leaves the key claimed, and after ``CLAIM_SECONDS`` a
retry runs the request again (the rare case where a retry may repeat a write).

Answers that hold a secret shown only once (a new workspace's first key, a new API key, a
webhook signing secret) are never stored: the code that puts the secret in an answer returns it
as :class:`ShownOnce`, a ``dict`` carrying a notice that says what was created and how to find
it or get a new secret. Only the status and that notice are kept, and a retry with the same key
and body gets 409 ``{"error": ...}`` with the notice instead of the first answer: the resource
exists once, and its secret is not repeated. (Records stored before this rule age out within
``IDEMPOTENCY_SECONDS``.)
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta, timezone

from pymongo.errors import DuplicateKeyError

from common.errors import BadRequest, Conflict, UnprocessableEntity

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
COLLECTION = "idempotency_keys"
CLAIM_SECONDS = 60
KEY = re.compile(r"[\x21-\x7e]{1,255}")  # printable ASCII, no spaces


class ShownOnce(dict):
    """A response body holding a secret shown only once. ``notice`` says what was created and
    how to find it (or get a new secret); a retry of the request answers it in a 409."""

    def __init__(self, body: dict, notice: str):
        super().__init__(body)
        self.notice = notice


class Idempotency:
    def __init__(self, db, retention_seconds: int):
        self.keys = db[COLLECTION]
        self.retention = timedelta(seconds=retention_seconds)
        # Real MongoDB drops a key when its retention is over; reads check the time too.
        self.keys.create_index("expiresAt", expireAfterSeconds=0)

    def process_resource(self, req, resp, resource, params):
        key = req.get_header(HEADER)
        if req.method != "POST" or key is None or resource is None:
            return
        if not KEY.fullmatch(key):
            raise BadRequest(f"header {HEADER} must be 1 to 255 printable ASCII characters")
        scope = f"{req.context.caller.to_header()}\n{req.method}\n{req.path}\n{key}"
        record_id = hashlib.sha256(scope.encode()).hexdigest()
        # The query is part of the request too (an import's source and columns are in it).
        fingerprint = hashlib.sha256(req.query_string.encode() + b"\n" + (req.context.get("body") or b"")).hexdigest()
        now = datetime.now(timezone.utc)
        claim = {"_id": record_id, "fingerprint": fingerprint, "claimedAt": now, "expiresAt": now + self.retention}
        try:
            self.keys.insert_one(claim)
        except DuplicateKeyError:
            record = self.keys.find_one({"_id": record_id})
            if record is None or _aware(record["expiresAt"]) <= now:
                self.keys.replace_one({"_id": record_id}, claim, upsert=True)  # expired: a new key
            elif record["fingerprint"] != fingerprint:
                raise UnprocessableEntity(f"this {HEADER} was used with a different request; use a new key") from None
            elif "shownOnce" in record:
                raise Conflict(
                    f"a request with this {HEADER} already succeeded; its answer held a secret that is shown "
                    f"only once, so it is not repeated: {record['shownOnce']}"
                ) from None
            elif "status" in record:
                resp.status = record["status"]
                resp.content_type = record.get("contentType") or resp.content_type
                resp.data = record["body"]
                resp.set_header(REPLAYED_HEADER, "true")
                resp.complete = True  # the first answer again; the resource does not run
                return
            elif _aware(record["claimedAt"]) > now - timedelta(seconds=CLAIM_SECONDS):
                raise Conflict(f"a request with this {HEADER} is still being processed; retry shortly", headers={"Retry-After": "1"}) from None
            elif self.keys.update_one({"_id": record_id, "claimedAt": record["claimedAt"]}, {"$set": {"claimedAt": now}}).matched_count != 1:
                raise Conflict(f"a request with this {HEADER} is still being processed; retry shortly", headers={"Retry-After": "1"}) from None
        req.context.idempotency_record = record_id

    def process_response(self, req, resp, resource, req_succeeded):
        record_id = req.context.get("idempotency_record")
        if record_id is None:
            return
        if resp.status_code >= 500:
            self.keys.delete_one({"_id": record_id})  # not an answer to keep: the retry may run
            return
        if isinstance(resp.media, ShownOnce):
            # The secret must not reach the database: keep that the request succeeded, and the notice.
            self.keys.update_one({"_id": record_id}, {"$set": {"status": resp.status, "shownOnce": resp.media.notice}})
            return
        body = resp.render_body() or b""
        self.keys.update_one(
            {"_id": record_id}, {"$set": {"status": resp.status, "contentType": resp.content_type, "body": body}}
        )


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
