"""Loopback servers that take what they are sent and never answer: a hung dependency of any kind."""

from __future__ import annotations

import socket
import threading

import pytest


class SilentServer:
    """A TCP server that accepts every connection and never says a word (an SMTP server, an
    OpenID provider, Redis or PostgreSQL that hangs); `url(scheme)` names it for a client."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self._held: list[socket.socket] = []
        self._closed = threading.Event()
        # Accepted and held, so that a client with many connections never waits on a full backlog instead.
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def url(self, scheme: str) -> str:
        return f"{scheme}://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                self._held.append(self.socket.accept()[0])
            except TimeoutError:
                continue

    def close(self) -> None:
        """Stop listening: from now on connections are refused."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._thread.join()
        for connection in self._held:
            connection.close()
        self.socket.close()


class SilentDnsServer:
    """A UDP socket that takes every DNS query and answers none."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def silent_server():
    server = SilentServer()
    yield server
    server.close()


@pytest.fixture
def silent_dns_server():
    server = SilentDnsServer()
    yield server
    server.close()
