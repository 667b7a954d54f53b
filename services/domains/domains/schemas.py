"""Request bodies the domains service accepts (JSON Schema, strict)."""

from common.validation import obj, string

# Length and form are checked by domains.names, with messages that say what is wrong.
SET_DOMAIN = obj({"domain": string(1000, 1)}, required=("domain",))
