"""Small helpers and settings the domains tests share."""

CNAME_TARGET = "edge.feedback.test"
PLATFORM_DOMAIN = "feedback.test"
DNS_TIMEOUT = 2.0  # generous: answers must not time out on a loaded machine
PENDING_TIMEOUT = 5.0


def dns_settings(dns_port: int) -> dict[str, str]:
    """What the domains processes need to resolve through the tests' DNS server (``dns_zone``)."""
    return {
        "DOMAINS_DNS_NAMESERVERS": "127.0.0.1",
        "DOMAINS_DNS_PORT": str(dns_port),
        "DOMAINS_DNS_TIMEOUT": str(DNS_TIMEOUT),
        "DOMAINS_CNAME_TARGET": CNAME_TARGET,
        "DOMAINS_PLATFORM_DOMAIN": PLATFORM_DOMAIN,
    }


def put_domain(ws, domain):
    r = ws.api.put(f"{ws.path}/domain", key=ws.key, json={"domain": domain})
    assert r.status_code == 200, r.text
    return r.json()


def verify(ws):
    r = ws.api.post(f"{ws.path}/domain/verify", key=ws.key)
    assert r.status_code == 200, r.text
    return r.json()


def get_domain(ws):
    r = ws.api.get(f"{ws.path}/domain", key=ws.key)
    assert r.status_code == 200, r.text
    return r.json()


def publish_records(zone, config):
    """Create at the DNS server the records a configuration asks for."""
    for record in config["records"]:
        if record["type"] == "txt":
            zone.set(record["name"], "TXT", f'"{record["value"]}"')
        elif record["type"] == "cname":
            assert record["value"] == CNAME_TARGET
            zone.set(record["name"], "CNAME", f'{record["value"]}.')


def branding_domain(ws):
    r = ws.api.get(f"{ws.path}/branding")
    assert r.status_code == 200, r.text
    return r.json()["customDomain"]
