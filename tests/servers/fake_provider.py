"""A real HTTP server on loopback that stands in for the OpenAI-compatible AI provider."""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading

import pytest

from kindling.web.app import create_app

KEY = "test-key-5b1c9e"


def completion(content: str | None) -> dict:
    """A chat completion whose one choice carries `content`."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


@dataclasses.dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict


class FakeProvider:
    """Records every request and answers with whatever the test set last."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.release = threading.Event()
        self.answer(200, completion("{}"))
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                provider.received.append(Received(self.path, dict(self.headers), body))
                provider._respond(self)

            def log_message(self, *_args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(
        self, status: int, body: dict | bytes, *, delay: float = 0, trickle: float = 0, headers: dict | None = None
    ) -> None:
        """Answer `status` and `body` after `delay` seconds, sending one byte per `trickle` seconds."""
        self.status = status
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.delay = delay
        self.trickle = trickle
        self.headers = headers or {}

    def answer_intent(self, intent: object) -> None:
        """Answer a chat completion whose content is `intent` as JSON."""
        self.answer(200, completion(json.dumps(intent)))

    def reset(self) -> None:
        self.received.clear()
        self.answer(200, completion("{}"))

    def _respond(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        # Waits end early when the server shuts down, so no test waits on a sleeping handler.
        if self.release.wait(self.delay):
            return
        try:
            handler.send_response(self.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(self.body)))
            for name, value in self.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            if not self.trickle:
                handler.wfile.write(self.body)
                return
            for byte in self.body:
                if self.release.wait(self.trickle):
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should on a slow provider

    def __enter__(self) -> FakeProvider:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture(scope="module")
def provider():
    with FakeProvider() as server:
        yield server


def keyed_app(settings, base_url: str):
    return create_app(dataclasses.replace(settings, ai_provider_api_key=KEY, ai_provider_base_url=base_url))


@pytest.fixture(scope="module")
def provider_app(settings, provider):
    return keyed_app(settings, f"http://127.0.0.1:{provider.port}/v1")


@pytest.fixture
def bind(db):
    """Run an extra app's requests inside this test's rolled-back transaction, with fresh limits."""
    bound = []

    def bind_app(app):
        state = app.app.extensions["kindling"]
        state.limiter.reset()
        state.session_factory.configure(bind=db.connection(), join_transaction_mode="create_savepoint")
        bound.append(state)
        return app

    yield bind_app
    for state in bound:
        state.session_factory.configure(bind=state.engine, join_transaction_mode="conservative_savepoint")


@pytest.fixture
def keyed(provider_app, provider, bind):
    """A client of an app whose AI provider is the fake one."""
    provider.reset()
    bind(provider_app)
    with provider_app.test_client() as test_client:
        yield test_client
