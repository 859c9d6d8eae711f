"""A real DNS server on loopback (dnslib's), whose TXT records the tests publish (the one that never
answers is in silent.py).

The session's app resolves through `dns_server` (its DNS_NAMESERVERS); a test publishes the
record an admin would with `dns_server.publish(name, value)`.
"""

from __future__ import annotations

import threading

import pytest
from dnslib import QTYPE, RCODE, RR, TXT
from dnslib.server import DNSLogger, DNSServer


class Zone:
    """The records served: TXT values by name, and CNAMEs; every other name does not exist."""

    def __init__(self) -> None:
        self.txt: dict[str, list[str]] = {}
        self.cname: dict[str, str] = {}
        self.failing = False
        self.queries: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def resolve(self, request, handler):
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        with self._lock:
            self.queries.append((name, QTYPE[request.q.qtype]))
            if self.failing:
                reply.header.rcode = RCODE.SERVFAIL
                return reply
            if name in self.cname:
                target = self.cname[name]
                reply.add_answer(*RR.fromZone(f"{name}. 60 CNAME {target}."))
                name = target
            values = self.txt.get(name)
            exists = values is not None or any(known.endswith("." + name) for known in self.txt)
        if values and request.q.qtype == QTYPE.TXT:
            for value in values:
                reply.add_answer(RR(f"{name}.", QTYPE.TXT, rdata=TXT(value), ttl=60))
        elif not exists:
            reply.header.rcode = RCODE.NXDOMAIN
        return reply


class DnsServer(Zone):
    """dnslib's server on a free loopback UDP port, in a thread of the test process."""

    def __init__(self) -> None:
        super().__init__()
        quiet = DNSLogger(log="-recv,-send,-request,-reply,-truncated,-error,-data", prefix=False)
        self.server = DNSServer(self, address="127.0.0.1", port=0, logger=quiet)
        self.port = self.server.server.server_address[1]

    def publish(self, name: str, *values: str) -> None:
        with self._lock:
            self.txt.setdefault(name.lower(), []).extend(values)

    def alias(self, name: str, target: str) -> None:
        with self._lock:
            self.cname[name.lower()] = target.lower()

    def clear(self) -> None:
        with self._lock:
            self.txt.clear()
            self.cname.clear()
            self.queries.clear()
            self.failing = False


@pytest.fixture(scope="session")
def dns_server():
    server = DnsServer()
    server.server.start_thread()
    yield server
    server.server.stop()
    server.server.server.server_close()


@pytest.fixture
def dns(dns_server):
    """The session's DNS server, emptied for this test."""
    dns_server.clear()
    yield dns_server
    dns_server.clear()
