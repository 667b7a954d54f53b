"""The SSRF guard, at registration and again at delivery (host names resolve through the
tests' own DNS server; only 127.0.0.1 is on the stack's allowlist)."""

from __future__ import annotations

import uuid

import pytest

from testkit import wait_for

@pytest.mark.parametrize(
    "url, words",
    [
        ("http://10.0.0.1/hook", "10.0.0.1, a private address"),
        ("http://172.16.5.4/hook", "a private address"),
        ("http://192.168.1.10/hook", "a private address"),
        ("http://169.254.169.254/latest/meta-data/", "a link-local address"),
        ("http://127.0.0.2/hook", "a loopback address"),
        ("http://0.0.0.0/hook", "an unspecified address"),
        ("http://[::1]/hook", "a loopback address"),
        ("http://[fd00:ec2::254]/hook", "a private address"),
        ("http://[::ffff:10.1.2.3]/hook", "a private address"),
        ("http://100.64.0.1/hook", "a non-public address"),
        ("http://224.0.0.1/hook", "a multicast address"),
    ],
)
def test_private_addresses_are_refused_at_registration(api, workspace, url, words):
    r = api.post(f"{workspace.path}/webhooks", key=workspace.key, json={"url": url})
    assert r.status_code == 400, r.text
    assert "field 'url'" in r.json()["error"] and words in r.json()["error"]


def test_host_names_are_resolved_and_every_address_checked(api, workspace, dns_zone):
    inside = f"inside-{uuid.uuid4().hex[:8]}.hooks.test"
    dns_zone.set(inside, "A", "10.9.8.7")
    mixed = f"mixed-{uuid.uuid4().hex[:8]}.hooks.test"
    dns_zone.set(mixed, "A", "127.0.0.1", "192.168.0.7")
    metadata = f"metadata-{uuid.uuid4().hex[:8]}.hooks.test"
    dns_zone.set(metadata, "A", "169.254.169.254")
    for host, words in [
        (inside, "resolves to 10.9.8.7"),
        (mixed, "resolves to 192.168.0.7"),
        (metadata, "resolves to 169.254.169.254"),
        ("nowhere.invalid", "cannot be resolved"),
    ]:
        r = api.post(f"{workspace.path}/webhooks", key=workspace.key, json={"url": f"http://{host}/hook"})
        assert r.status_code == 400, r.text
        assert words in r.json()["error"]


def test_the_guard_runs_again_at_delivery(hooks, receiver, dns_zone):
    host = f"rebind-{uuid.uuid4().hex[:8]}.hooks.test"
    dns_zone.set(host, "A", "127.0.0.1")
    route = receiver.route()
    url = route.url.replace("127.0.0.1", host)
    r = hooks.api.post(hooks.base, key=hooks.ws.key, json={"url": url})
    assert r.status_code == 201, r.text
    hook = r.json()
    route.secrets.append(hook["secret"])

    dns_zone.set(host, "A", "10.20.30.40")  # the name now points inside the network
    ping = hooks.ping(hook["id"])
    refused = wait_for(lambda: (d := hooks.delivery(hook["id"], ping["id"]))["attemptCount"] >= 2 and d)
    assert all(a["statusCode"] is None and "10.20.30.40" in a["error"] for a in refused["attempts"])
    assert route.received == []

    dns_zone.set(host, "A", "127.0.0.1")  # and back: the next retry goes through
    done = hooks.settled(hook["id"], ping["id"], timeout=30)
    assert done["status"] == "succeeded"
    [got] = route.received
    assert got.verified_with == route.secrets and got.headers["host"].startswith(host)
