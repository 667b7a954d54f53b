"""The outbound-fetch guard (common.outbound) against real sockets on loopback: the address and
port rules, the allowlist, resolution through a real DNS server, redirects checked at every hop,
one deadline for the whole exchange, the size cap and the coarse errors.

Servers of the tests' own listen on 127.0.0.1, which the policies under test allow (by address,
CIDR or name); 127.0.0.2 stands for an address inside the network that nobody allowed."""

from __future__ import annotations

import ipaddress
import socket
import time
import uuid

import pytest

from common.outbound import (INTERNAL_SERVICE_PORTS, ConnectionFailed, OutboundClient, Refused, TimedOut, TlsError,
                             TooLarge, TooManyRedirects, UrlPolicy, UrlRefused, why_address_forbidden)
from testkit.dns import Zone, start
from testkit.http import Server, tcp_server

PUBLIC_V4 = "93.184.215.14"
MARGIN = 5  # seconds past a deadline an answer may take on a loaded machine
STRICT = UrlPolicy(purpose="the tests")
LOCAL = UrlPolicy(allow_http=True, allowed_hosts=("127.0.0.1",), purpose="the tests")


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def inside():
    s = Server("127.0.0.2")
    s.routes["/"] = lambda req: req.answer(200, b"internal-secret")
    yield s
    s.close()


@pytest.fixture
def client():
    c = OutboundClient(LOCAL, timeout=2.0, max_bytes=1024)
    yield c
    c.close()


@pytest.fixture(scope="module")
def zone():
    z = Zone()
    dns_server, z.port = start(z)
    yield z
    dns_server.stop()


def refusal(url: str, policy: UrlPolicy = STRICT) -> str:
    with pytest.raises(UrlRefused) as refused:
        policy.check(url)
    return str(refused.value)


# -- the policy ----------------------------------------------------------------------------------


@pytest.mark.parametrize("address, kind", [
    ("127.0.0.1", "a loopback"), ("127.0.0.2", "a loopback"), ("::1", "a loopback"),
    ("10.0.0.1", "a private"), ("172.16.5.4", "a private"), ("192.168.1.10", "a private"), ("fd00:ec2::254", "a private"),
    ("169.254.169.254", "a link-local"), ("fe80::1", "a link-local"),
    ("100.64.0.1", "a non-public"),  # CGNAT
    ("0.0.0.0", "an unspecified"), ("::", "an unspecified"),
    ("224.0.0.1", "a multicast"), ("ff02::1", "a multicast"),
    ("240.0.0.1", "a private"),  # reserved, which ipaddress counts as private
    ("::ffff:10.1.2.3", "a private"), ("::ffff:169.254.169.254", "a link-local"),  # IPv4-mapped
    ("64:ff9b::a9fe:a9fe", "a link-local"),  # NAT64 around the metadata address
    ("::127.0.0.1", "a loopback"), ("::8.8.8.8", "a deprecated IPv4-compatible"),
    ("fec0::1", "a site-local"), ("2002:a00:1::1", "a 6to4"), ("2001::1", "a Teredo"), ("64:ff9b:1::a00:1", "a local-use NAT64"),
    (PUBLIC_V4, None), ("2606:4700::1111", None), ("64:ff9b::808:808", None), ("::ffff:93.184.215.14", None),
])
def test_address_classes(address, kind):
    assert why_address_forbidden(ipaddress.ip_address(address)) == kind
    host = f"[{address}]" if ":" in address else address
    if kind:
        assert refusal(f"https://{host}/x") == (
            f"resolves to {ipaddress.ip_address(address)}, {kind} address, which the tests may not call")
    else:
        assert STRICT.check(f"https://{host}/x").addresses == (str(ipaddress.ip_address(address)),)


def test_the_url_rules_and_the_purpose_in_every_refusal():
    assert refusal("ftp://example.com/") == "must be an absolute http(s) URL"
    assert refusal("/relative") == "must be an absolute http(s) URL"
    assert refusal(f"http://{PUBLIC_V4}/") == "must use https"
    assert refusal(f"https://user:pw@{PUBLIC_V4}/") == "must not contain credentials"
    assert "is not a valid URL" in refusal(f"https://{PUBLIC_V4}:65536/")
    assert refusal(f"https://{PUBLIC_V4}:22/") == "uses port 22, a port below 1024 other than 80 and 443, which the tests may not call"
    assert "(Redis)" in refusal(f"https://{PUBLIC_V4}:6379/")
    assert UrlPolicy(purpose="webhooks").check(f"https://{PUBLIC_V4}:8443/a?b=1").path == "/a?b=1"
    assert {p for first, last, _ in INTERNAL_SERVICE_PORTS for p in range(first, last + 1)} >= {2379, 5432, 6443, 9092, 27017}


def test_the_allowlist_lifts_both_rules_for_what_it_names_only():
    policy = UrlPolicy(allowed_hosts=("10.1.0.0/16", "localhost", "127.0.0.1"))
    assert policy.check("https://10.1.2.3:22/").port == 22
    assert policy.check("https://127.0.0.1:27017/").port == 27017
    assert "127.0.0.1" in policy.check("https://LOCALHOST:5432/").addresses  # by name (the hosts file)
    assert "10.2.0.1, a private address" in refusal("https://10.2.0.1/", policy)
    assert "127.0.0.2, a loopback address" in refusal("https://127.0.0.2/", policy)
    assert "uses port 6379" in refusal(f"https://{PUBLIC_V4}:6379/", policy)


def test_every_resolved_address_must_pass(zone):
    policy = UrlPolicy(dns_server=f"127.0.0.1:{zone.port}", dns_timeout=1, purpose="the tests")
    name = f"mixed-{uuid.uuid4().hex[:8]}.test"
    zone.set(name, "A", PUBLIC_V4, "192.168.0.7")
    assert "resolves to 192.168.0.7, a private address" in refusal(f"https://{name}/", policy)
    zone.set(name, "A", PUBLIC_V4)
    zone.set(name, "AAAA", "::ffff:a9fe:a9fe")  # ::ffff:169.254.169.254
    assert "a link-local address" in refusal(f"https://{name}/", policy)
    zone.set(name, "AAAA")
    assert policy.check(f"https://{name}/").addresses == (PUBLIC_V4,)
    assert "cannot be resolved (no such name)" in refusal("https://nowhere.test/", policy)
    silent = f"silent-{uuid.uuid4().hex[:8]}.test"
    zone.silent(silent)
    began = time.monotonic()
    assert "cannot be resolved" in refusal(f"https://{silent}/", policy)
    assert time.monotonic() - began < 1 + MARGIN


# -- where the client connects -------------------------------------------------------------------


def test_the_client_connects_to_the_checked_address_with_the_name_as_host(server, zone):
    name = f"svc-{uuid.uuid4().hex[:8]}.test"
    zone.set(name, "A", "127.0.0.3", "127.0.0.1")  # the first takes no connection: the next checked one is tried
    policy = UrlPolicy(allow_http=True, allowed_hosts=("127.0.0.0/8",), dns_server=f"127.0.0.1:{zone.port}")
    server.routes["/x?y=1"] = lambda req: req.answer(200, b'{"a": 1}')
    c = OutboundClient(policy, timeout=3, user_agent="tests/1.0")
    try:
        answer = c.get(f"http://{name}:{server.port}/x?y=1")
    finally:
        c.close()
    assert (answer.status, answer.json()) == (200, {"a": 1})
    sent = server.requests[-1]["headers"]
    assert sent["host"] == f"{name}:{server.port}" and sent["user-agent"] == "tests/1.0"
    assert sent["accept-encoding"] == "identity"

    zone.set(name, "A", "127.0.0.2")  # the name now points where nobody allowed: refused before any connection
    with pytest.raises(Refused, match="127.0.0.2, a loopback address"):
        OutboundClient(UrlPolicy(allow_http=True, allowed_hosts=("127.0.0.1",), dns_server=f"127.0.0.1:{zone.port}")).get(
            f"http://{name}:{server.port}/x?y=1")


def test_posts_a_form_or_json(server, client):
    server.routes["/token"] = lambda req: req.answer(200, b"{}")
    client.post(f"{server.url}/token", form={"grant_type": "authorization_code", "code": "a b&c"})
    client.post(f"{server.url}/token", json={"k": [1]})
    form, body = server.requests[-2:]
    assert form["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert form["body"] == b"grant_type=authorization_code&code=a+b%26c"
    assert body["headers"]["content-type"] == "application/json" and body["body"] == b'{"k": [1]}'


# -- redirects -----------------------------------------------------------------------------------


def test_redirects_are_followed_only_when_asked(server, client):
    server.routes["/old"] = lambda req: req.answer(302, b"", {"Location": "/new"})
    server.routes["/new"] = lambda req: req.answer(200, b"here")
    assert client.get(f"{server.url}/old").status == 302
    answer = client.get(f"{server.url}/old", follow_redirects=True)
    assert (answer.status, answer.body, answer.url) == (200, b"here", f"{server.url}/new")


def test_every_hop_is_checked_again_and_nothing_reaches_a_refused_one(server, client, inside):
    for location, words in [
        (inside.url + "/", "redirected to a URL that resolves to 127.0.0.2, a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "redirected to a URL that resolves to 169.254.169.254, a link-local address"),
        ("http://[::ffff:10.0.0.1]/", "a private address"),
        ("file:///etc/passwd", "redirected to a URL that must be an absolute http(s) URL"),
    ]:
        server.routes["/go"] = lambda req, location=location: req.answer(307, b"", {"Location": location})
        with pytest.raises(Refused) as refused:
            client.get(f"{server.url}/go", follow_redirects=True)
        assert refused.value.redirected and words in str(refused.value)
    assert inside.requests == []
    # https to http is a refusal too where http is not allowed.
    strict = OutboundClient(UrlPolicy(allowed_hosts=("127.0.0.1",)), timeout=2)
    with pytest.raises(Refused, match="must use https"):
        strict.get(f"{server.url}/go")


def test_redirects_keep_or_drop_the_body_and_credentials_as_http_says(server, client):
    other = Server()
    try:
        other.routes["/elsewhere"] = lambda req: req.answer(200)
        server.routes["/here"] = lambda req: req.answer(200)
        server.routes["/307"] = lambda req: req.answer(307, b"", {"Location": "/here"})
        server.routes["/303"] = lambda req: req.answer(303, b"", {"Location": "/here"})
        server.routes["/away"] = lambda req: req.answer(308, b"", {"Location": other.url + "/elsewhere"})
        auth = {"Authorization": "Basic c2VjcmV0"}
        client.post(f"{server.url}/307", form={"a": "1"}, headers=auth, follow_redirects=True)
        kept = server.requests[-1]
        assert (kept["method"], kept["body"], kept["headers"]["authorization"]) == ("POST", b"a=1", "Basic c2VjcmV0")
        client.post(f"{server.url}/303", form={"a": "1"}, follow_redirects=True)
        assert (server.requests[-1]["method"], server.requests[-1]["body"]) == ("GET", b"")
        client.post(f"{server.url}/away", form={"a": "1"}, headers=auth, follow_redirects=True)
        moved = other.requests[-1]
        assert moved["method"] == "POST" and "authorization" not in moved["headers"], "no credentials to another origin"
    finally:
        other.close()


def test_redirects_are_followed_a_few_hops_at_most(server):
    server.routes["/loop"] = lambda req: req.answer(302, b"", {"Location": "/loop"})
    c = OutboundClient(LOCAL, timeout=2, max_redirects=3)
    with pytest.raises(TooManyRedirects, match="more than 3 redirects"):
        c.get(f"{server.url}/loop", follow_redirects=True)
    assert len(server.requests) == 4


# -- the deadline and the size cap ----------------------------------------------------------------


def drip(server: Server, body: bytes, every: float = 0.2):
    def handler(req):
        req.send_response(200)
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        for i in range(len(body)):
            if server.stop.wait(every):
                return
            req.wfile.write(body[i:i + 1])
            req.wfile.flush()

    return handler


def test_a_dripping_answer_is_cut_at_the_deadline(server):
    server.routes["/drip"] = drip(server, b"x" * 200)  # 40 s in all, each byte well inside any read timeout
    c = OutboundClient(LOCAL, timeout=1.0)
    began = time.monotonic()
    with pytest.raises(TimedOut, match=r"timeout: no complete answer within 1s"):
        c.get(f"{server.url}/drip")
    assert time.monotonic() - began < 1 + MARGIN
    # And the client is fine afterwards.
    server.routes["/ok"] = lambda req: req.answer(200)
    assert c.get(f"{server.url}/ok").status == 200


def test_the_deadline_covers_the_whole_exchange_redirects_included(server):
    def slow_hop(req):
        time.sleep(0.4)  # each hop well inside any per-request timeout
        req.answer(302, b"", {"Location": "/hop"})

    server.routes["/hop"] = slow_hop
    c = OutboundClient(LOCAL, timeout=1.0, max_redirects=10)
    began = time.monotonic()
    with pytest.raises(TimedOut):
        c.get(f"{server.url}/hop", follow_redirects=True)
    assert time.monotonic() - began < 1 + MARGIN
    assert len(server.requests) < 10


def test_an_answer_larger_than_the_cap_is_refused(server, client):
    server.routes["/said"] = lambda req: req.answer(200, b"x" * 5000)

    def unsaid(req):  # no length: only reading tells
        req.send_response(200)
        req.send_header("Connection", "close")
        req.end_headers()
        req.close_connection = True
        req.wfile.write(b"x" * 5000)

    server.routes["/unsaid"] = unsaid
    server.routes["/fits"] = lambda req: req.answer(200, b"x" * 1024)
    for path in ("/said", "/unsaid"):
        with pytest.raises(TooLarge, match="larger than 1024 bytes"):
            client.get(server.url + path)
    assert client.get(server.url + "/fits").body == b"x" * 1024
    # A caller that wants the status only gets it, the body dropped.
    dropped = client.get(server.url + "/said", drop_body=True)
    assert (dropped.status, dropped.body) == (200, b"")


# -- coarse errors ---------------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_failures_say_nothing_of_what_answered(client):
    with tcp_server(b"SSH-2.0-OpenSSH_9.6 internal-bastion-7\r\n") as port:
        for url, error in [(f"http://127.0.0.1:{port}/", ConnectionFailed), (f"https://127.0.0.1:{port}/", TlsError)]:
            with pytest.raises(error) as failed:
                client.get(url)
            assert "SSH" not in str(failed.value) and "bastion" not in str(failed.value)
    with pytest.raises(ConnectionFailed, match="^connection failed$"):
        client.get(f"http://127.0.0.1:{closed_port()}/")
    assert str(TlsError()) == "TLS error"
