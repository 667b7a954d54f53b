"""Who the client is on the network: its address, believed only from what the gateway can verify.

The address is the peer's, or, when the peer is a trusted proxy (``TRUSTED_PROXIES``), the
nearest address in ``X-Forwarded-For`` that is not one. A front service (the board site, the MCP
server) calls ``/v1`` for its own clients from its own address; the gateway gave it, with each
request it forwarded, a token naming that request's client address, signed with a key only the
gateway holds (``GATEWAY_SECRET``). The front service sends the token back, unchanged, on the
``/v1`` calls it makes for that request (``common.public_api.CLIENT_HEADER``), and the gateway
counts those calls against the client named in it. Anyone can send the header: a token that
does not verify, or is older than ``TOKEN_SECONDS``, is ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import time

from common.public_api import CLIENT_HEADER

TOKEN_SECONDS = 120  # longer than any request a front service answers (PROXY_READ_TIMEOUT: 30 s)


class ClientAddresses:
    def __init__(self, trusted_proxies: tuple, secret: str, clock=time.time):
        self.trusted = trusted_proxies
        self.key = hashlib.sha256(b"client-address|" + secret.encode()).digest()
        self.clock = clock

    def of(self, req) -> str:
        """The address of the client this request is for."""
        vouched = self.verify(req.get_header(CLIENT_HEADER))
        return vouched if vouched is not None else peer_address(req, self.trusted)

    def token(self, address: str) -> str:
        """What a front service gets to vouch for ``address`` for a while."""
        issued = str(int(self.clock()))
        return f"{address} {issued} {self._sign(address, issued)}"

    def verify(self, token: str | None) -> str | None:
        """The address ``token`` vouches for, or None when it is absent, forged or stale."""
        parts = (token or "").split(" ")
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        address, issued, signature = parts
        if abs(self.clock() - int(issued)) > TOKEN_SECONDS:
            return None
        return address if hmac.compare_digest(signature, self._sign(address, issued)) else None

    def _sign(self, address: str, issued: str) -> str:
        return hmac.new(self.key, f"{address}|{issued}".encode(), hashlib.sha256).hexdigest()


def peer_address(req, trusted: tuple) -> str:
    """The peer's address, or, when the peer is a trusted proxy, the nearest address in
    X-Forwarded-For that is not a trusted proxy."""
    peer = req.remote_addr or ""
    if not trusted or not _within(peer, trusted):
        return peer
    hops = [h.strip() for h in (req.get_header("X-Forwarded-For") or "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not _within(hop, trusted):
            return hop
    return hops[0] if hops else peer


def _within(address: str, networks: tuple) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)
