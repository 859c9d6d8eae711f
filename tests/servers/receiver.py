"""A real HTTP server on loopback that stands in for a consultant's webhook receiver."""

from __future__ import annotations

import dataclasses
import http.server
import threading
import time

import pytest


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # Workers send a batch at once; the default backlog of 5 would drop connections.
    request_queue_size = 128


@dataclasses.dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """Records every request; answers with the scripted statuses in turn, then with `status`."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.script: list[int] = []
        self.status = 200
        self.delay = 0.0
        self.headers: dict[str, str] = {}
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with receiver._lock:
                    receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    status = receiver.script.pop(0) if receiver.script else receiver.status
                time.sleep(receiver.delay)
                self.send_response(status)
                for name, value in receiver.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def ids(self) -> list[str]:
        return [request.headers["webhook-id"] for request in self.requests]

    def wait_for(self, count: int, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()
