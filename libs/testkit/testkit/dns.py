"""A real DNS server for the tests: dnslib's DNSServer on 127.0.0.1, answering from a
zone the tests change while it runs (custom-domain TXT/CNAME checks, the webhook URL guard's
A records).

Names without records answer NXDOMAIN; a name with records but none of the asked type
answers NOERROR with no answer. A name can be made to answer SERVFAIL, or to stay
silent (the query is dropped, so the resolver times out).
"""

from __future__ import annotations

import socket
import threading

from dnslib import QTYPE, RCODE, RR, DNSRecord
from dnslib.dns import DNSError
from dnslib.server import DNSServer

TTL = 0


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Zone:
    """name -> {type: [zone-file rdata]}, plus names that fail; safe across threads."""

    def __init__(self):
        self.port: int | None = None  # set once the server listens
        self._records: dict[str, dict[str, list[str]]] = {}
        self._servfail: set[str] = set()
        self._silent: set[str] = set()
        self._lock = threading.Lock()

    @staticmethod
    def _key(name: str) -> str:
        return name.lower().rstrip(".")

    def set(self, name: str, rtype: str, *values: str) -> None:
        """Replace the ``rtype`` records of ``name`` (no values: remove them)."""
        with self._lock:
            types = self._records.setdefault(self._key(name), {})
            if values:
                types[rtype.upper()] = list(values)
            else:
                types.pop(rtype.upper(), None)
                if not types:
                    del self._records[self._key(name)]

    def clear(self, name: str) -> None:
        with self._lock:
            self._records.pop(self._key(name), None)
            self._servfail.discard(self._key(name))
            self._silent.discard(self._key(name))

    def servfail(self, name: str) -> None:
        with self._lock:
            self._servfail.add(self._key(name))

    def silent(self, name: str) -> None:
        with self._lock:
            self._silent.add(self._key(name))

    # -- dnslib resolver interface ------------------------------------------------------

    def resolve(self, request: DNSRecord, handler) -> DNSRecord:
        name = self._key(str(request.q.qname))
        qtype = QTYPE[request.q.qtype]
        with self._lock:
            if name in self._silent:
                raise DNSError(f"staying silent for {name}")  # dnslib logs it and sends nothing
            servfail = name in self._servfail
            types = {t: list(v) for t, v in self._records.get(name, {}).items()}
        reply = request.reply()
        if servfail:
            reply.header.rcode = RCODE.SERVFAIL
        elif not types:
            reply.header.rcode = RCODE.NXDOMAIN
        else:
            for value in types.get(qtype, []):
                reply.add_answer(*RR.fromZone(f"{name}. {TTL} IN {qtype} {value}"))
        return reply


class QuietLogger:
    """dnslib logs every packet by default; the tests do not need that."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def start(zone: Zone) -> tuple[DNSServer, int]:
    port = free_udp_port()
    server = DNSServer(zone, address="127.0.0.1", port=port, logger=QuietLogger())
    server.start_thread()
    return server, port
