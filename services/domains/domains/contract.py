"""What the domains service owns, publishes and consumes."""

from common.validation import TEXT, TIMESTAMP, array, nullable, shape

TOPIC = "feedback.domains"
CONSUMES = ()

# Statuses (transitions in docs/services/domains.md). `none` is never stored as a domain:
# it is what a workspace without a custom domain shows.
NONE = "none"
PENDING = "pending"  # records handed out, not (yet) found
VERIFIED = "verified"  # TXT and CNAME found; the gateway serves the workspace on the domain
BROKEN = "broken"  # was verified, a re-check found the records gone or wrong
FAILED = "failed"  # pending (or broken) for DOMAINS_PENDING_TIMEOUT without success
STATUSES = (NONE, PENDING, VERIFIED, BROKEN, FAILED)
CHECKED_BY_WORKER = (PENDING, VERIFIED, BROKEN)

# Events on feedback.domains, one per status change, named after the new status;
# data: the domain configuration (docs/services/domains.md).
DOMAIN_PENDING = "domain.pending"
DOMAIN_VERIFIED = "domain.verified"
DOMAIN_BROKEN = "domain.broken"
DOMAIN_FAILED = "domain.failed"
DOMAIN_REMOVED = "domain.removed"  # data.status is "none", data.domain the removed domain
EVENT_FOR_STATUS = {PENDING: DOMAIN_PENDING, VERIFIED: DOMAIN_VERIFIED, BROKEN: DOMAIN_BROKEN, FAILED: DOMAIN_FAILED}

# The domain configuration, as GET /domain answers it.
CONFIGURATION = shape(
    {
        "domain": nullable(TEXT),
        "cnameTarget": TEXT,
        "status": {"enum": list(STATUSES)},
        "records": array(shape({"type": TEXT, "name": TEXT, "value": TEXT})),
        "errors": array(TEXT),
        "verifiedAt": nullable(TIMESTAMP),
    }
)

# Every event on feedback.domains and the JSON schema of its ``data``.
EVENTS = {event: CONFIGURATION for event in (*EVENT_FOR_STATUS.values(), DOMAIN_REMOVED)}

# The TXT record that proves control of a domain lives at "<TXT_PREFIX>.<domain>".
TXT_PREFIX = "_feedback-verify"
MAX_NAME = 253  # characters of a name in DNS, without the final dot
# The verification record "<TXT_PREFIX>.<domain>" must fit in DNS too.
MAX_DOMAIN = MAX_NAME - len(TXT_PREFIX) - 1

# A verified domain survives this many consecutive inconclusive re-checks (timeouts,
# SERVFAIL) before it is marked broken; a definite answer without the records breaks it at once.
INCONCLUSIVE_CHECKS_BEFORE_BROKEN = 3

# A worker that claimed a check and died gives it back after this many seconds.
CHECK_LEASE_SECONDS = 120.0
