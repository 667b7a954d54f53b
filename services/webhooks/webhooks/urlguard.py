"""Which webhook URLs may be called: the platform's outbound-fetch guard under the webhooks
service's settings.

The rules (scheme, credentials, every resolved address public, the port rule, the allowlist)
are :mod:`common.outbound`'s, shared with every service that calls URLs its users name; here
they take WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOWED_HOSTS, WEBHOOK_DNS_SERVER and WEBHOOK_DNS_TIMEOUT,
and a refusal says "which webhooks may not call" (that of an ``http://`` URL names
WEBHOOK_ALLOW_HTTP, the setting that allows it locally). The guard runs when a URL is registered and
again before every attempt; the sender then connects to the very address it checked (see
:mod:`webhooks.delivery_client`), so a DNS answer that changes in between cannot redirect it.
"""

from __future__ import annotations

from common.outbound import INTERNAL_SERVICE_PORTS, Target, UrlRefused, why_port_forbidden
from common.outbound import UrlPolicy as _UrlPolicy
from webhooks.config import WebhooksConfig

__all__ = ["INTERNAL_SERVICE_PORTS", "Target", "UrlPolicy", "UrlRefused", "why_port_forbidden"]
PURPOSE = "webhooks"
HTTP_SETTING = "WEBHOOK_ALLOW_HTTP=true"  # named in the refusal of an http:// URL


class UrlPolicy(_UrlPolicy):
    def __init__(self, config: WebhooksConfig):
        super().__init__(allow_http=config.allow_http, allowed_hosts=config.allowed_hosts, dns_server=config.dns_server,
                         dns_timeout=config.dns_timeout, purpose=PURPOSE, http_setting=HTTP_SETTING)
