"""A real DNS server for the URL-guard tests: dnslib's DNSServer on 127.0.0.1 answering A
records from a dict the tests change while it runs (other names: NXDOMAIN)."""

from __future__ import annotations

import socket
import threading

from dnslib import QTYPE, RCODE, RR, DNSRecord
from dnslib.server import DNSServer


class Names:
    def __init__(self):
        self._a: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def set(self, name: str, *addresses: str) -> None:
        with self._lock:
            self._a[name.lower().rstrip(".")] = list(addresses)

    def resolve(self, request: DNSRecord, handler) -> DNSRecord:
        name = str(request.q.qname).lower().rstrip(".")
        with self._lock:
            addresses = self._a.get(name)
        reply = request.reply()
        if addresses is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif QTYPE[request.q.qtype] == "A":
            for address in addresses:
                reply.add_answer(*RR.fromZone(f"{name}. 0 IN A {address}"))
        return reply


class _Quiet:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def start(names: Names) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    DNSServer(names, address="127.0.0.1", port=port, logger=_Quiet()).start_thread()
    return port
