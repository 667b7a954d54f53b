"""The URL guard's address and port rules, and the coarse errors a delivery attempt records,
without the stack: the guard under its default settings (no allowlist) and the delivery client
against small servers of the test's own on 127.0.0.1 (allowlisted, as the stack's receiver is)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from webhooks.config import WebhooksConfig
from webhooks.delivery_client import DeliveryClient
from webhooks.urlguard import INTERNAL_SERVICE_PORTS, UrlPolicy, UrlRefused
from testkit.http import tcp_server

GUARD = UrlPolicy(WebhooksConfig())
PUBLIC_V4 = "93.184.215.14"


def refusal(url: str, policy: UrlPolicy = GUARD) -> str:
    with pytest.raises(UrlRefused) as refused:
        policy.check(url)
    return str(refused.value)


@pytest.mark.parametrize(
    "address, words",
    [
        # IPv6 ranges Python 3.11's ipaddress calls global
        ("fec0::1", "a site-local address"),
        ("fefe:1::1", "a site-local address"),
        ("2002:a00:1::1", "a 6to4 address"),  # around 10.0.0.1
        ("2002:c0a8:101::1", "a 6to4 address"),  # around 192.168.1.1
        ("2002:808:808::1", "a 6to4 address"),  # around a public address: the relay still decides
        ("2001::1", "a Teredo address"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo address"),
        ("64:ff9b:1::a00:1", "a local-use NAT64 address"),
        ("64:ff9b:1:ffff::808:808", "a local-use NAT64 address"),
        # IPv4 wrapped in IPv6: judged by the IPv4 address
        ("64:ff9b::a00:1", "a private address"),  # NAT64 around 10.0.0.1
        ("64:ff9b::7f00:1", "a loopback address"),  # NAT64 around 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "a link-local address"),  # NAT64 around 169.254.169.254
        ("::ffff:10.1.2.3", "a private address"),  # IPv4-mapped
        ("::ffff:169.254.169.254", "a link-local address"),
        ("::10.1.2.3", "a private address"),  # IPv4-compatible
        ("::127.0.0.1", "a loopback address"),
        ("::8.8.8.8", "a deprecated IPv4-compatible address"),
        # what was refused before stays refused
        ("::1", "a loopback address"),
        ("::", "an unspecified address"),
        ("fd00:ec2::254", "a private address"),
        ("fe80::1", "a link-local address"),
        ("ff02::1", "a multicast address"),
        ("10.0.0.1", "a private address"),
        ("169.254.169.254", "a link-local address"),
        ("100.64.0.1", "a non-public address"),
    ],
)
def test_addresses_that_reach_inside_a_network_are_refused(address, words):
    host = f"[{address}]" if ":" in address else address
    message = refusal(f"https://{host}/hook")
    assert message == f"resolves to {ipaddress.ip_address(address)}, {words}, which webhooks may not call"


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "64:ff9b::5db8:d70e", "2606:4700::1111", "::ffff:93.184.215.14", PUBLIC_V4])
def test_public_destinations_pass_including_nat64_around_a_public_address(address):
    host = f"[{address}]" if ":" in address else address
    assert GUARD.check(f"https://{host}/hook").addresses == (str(ipaddress.ip_address(address)),)


def test_only_80_443_and_high_ports_outside_internal_services_are_called():
    def allowed(port: int) -> bool:
        try:
            GUARD.check(f"https://{PUBLIC_V4}:{port}/hook")
            return True
        except UrlRefused as ex:
            assert str(ex).startswith(f"uses port {port}, "), ex
            return False

    for port in (80, 443, 1024, 3000, 5000, 8000, 8080, 8443, 9443, 65535):
        assert allowed(port), port
    for port in (1, 21, 22, 23, 25, 53, 110, 111, 135, 139, 445, 514, 873, 1023):
        assert not allowed(port), port
    assert "a port below 1024 other than 80 and 443" in refusal(f"http://{PUBLIC_V4}:22/", UrlPolicy(WebhooksConfig(allow_http=True)))

    internal = {p for first, last, _ in INTERNAL_SERVICE_PORTS for p in range(first, last + 1)}
    for required in (2375, 2376, 2379, 2380, 3306, 5432, 6379, 6443, 8500, 9200, 11211, 27017, 27018, 27019, *range(10250, 10260)):
        assert required in internal, required
    for first, last, service in INTERNAL_SERVICE_PORTS:
        for port in (first, last):
            assert f"the port of an internal service ({service})" in refusal(f"https://{PUBLIC_V4}:{port}/hook")
        for neighbour in (first - 1, last + 1):
            if neighbour >= 1024 and neighbour not in internal:
                assert allowed(neighbour), neighbour
    assert "is not a valid URL" in refusal(f"https://{PUBLIC_V4}:65536/hook")


def test_the_allowlist_lifts_the_port_rule_for_the_hosts_it_covers_only():
    by_address = UrlPolicy(WebhooksConfig(allowed_hosts=("127.0.0.1", "10.1.0.0/16")))
    assert by_address.check("https://127.0.0.1:6379/").port == 6379
    assert by_address.check("https://10.1.2.3:22/").port == 22
    assert "uses port 6379" in refusal(f"https://{PUBLIC_V4}:6379/", by_address)
    by_name = UrlPolicy(WebhooksConfig(allowed_hosts=("localhost",)))
    assert by_name.check("https://localhost:5432/").port == 5432


# -- what an attempt records ---------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def client():
    policy = UrlPolicy(WebhooksConfig(allow_http=True, allowed_hosts=("127.0.0.1",)))
    client = DeliveryClient(policy, timeout=3.0, pool_size=1)
    yield client
    client.close()


def test_an_attempt_records_a_coarse_error_that_tells_nothing_of_what_answered(client):
    banner = b"SSH-2.0-OpenSSH_9.6 internal-bastion-7\r\n"
    with tcp_server(banner) as port:
        not_http = client.post(f"http://127.0.0.1:{port}/hook", b"{}", {})
        tls_to_plain = client.post(f"https://127.0.0.1:{port}/hook", b"{}", {})
    refused = client.post(f"http://127.0.0.1:{closed_port()}/hook", b"{}", {})
    with tcp_server(b"HTTP/1.1 500 Internal Server Error\r\nServer: secret-thing/1.0\r\nContent-Length: 0\r\n\r\n") as port:
        answered = client.post(f"http://127.0.0.1:{port}/hook", b"{}", {})

    assert (not_http.status, not_http.error) == (None, "connection failed")
    assert (refused.status, refused.error) == (None, "connection failed")
    assert (tls_to_plain.status, tls_to_plain.error) == (None, "TLS error")
    assert (answered.status, answered.error) == (500, None), "an HTTP answer is its status code, nothing more"
    refused_url = client.post("http://10.0.0.1/hook", b"{}", {})
    assert refused_url.error == "refused: the URL resolves to 10.0.0.1, a private address, which webhooks may not call"


def test_a_url_refused_for_its_port_is_recorded_as_such_without_a_connection():
    client = DeliveryClient(UrlPolicy(WebhooksConfig(allow_http=True)), timeout=3.0, pool_size=1)
    try:
        answer = client.post(f"http://{PUBLIC_V4}:6379/", b"{}", {})
    finally:
        client.close()
    assert answer.status is None
    assert answer.error == "refused: the URL uses port 6379, the port of an internal service (Redis), which webhooks may not call"
