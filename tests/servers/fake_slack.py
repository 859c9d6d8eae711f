"""A real HTTP server on loopback standing in for Slack: its Web API, and the `response_url`s of its requests.

It answers `oauth.v2.access`, `users.info`, `chat.postMessage`, `views.open` and `views.publish`
as Slack documents them, checks the client credentials and the bot token, and records every call.
Requests from Slack are signed here as Slack signs them: `v0=` and the hex HMAC-SHA256 of
`v0:{timestamp}:{body}` under the app's signing secret.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import http.server
import json
import threading
import time
import urllib.parse

import pytest

CLIENT_ID = "1234.5678"
CLIENT_SECRET = "slack-client-secret-7f3a"
SIGNING_SECRET = "slack-signing-secret-8e2b4c"
SECRET_KEY = "a-secret-key-of-at-least-32-chars!!"
TEAM_ID = "T0KINDLY"
BOT_TOKEN = "xoxb-test-bot-token"


def slack_headers(body: bytes, *, timestamp: int | str | None = None, secret: str = SIGNING_SECRET) -> dict:
    """The headers Slack sends with `body`: its timestamp and signature."""
    timestamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


@dataclasses.dataclass
class Call:
    method: str
    arguments: dict
    token: str | None


class FakeSlack:
    """Slack's Web API under `/api/`, and response URLs under `/respond/`; `users` maps Slack ids to profiles."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.replies: list[tuple[str, dict]] = []
        self.users: dict[str, dict] = {}
        self.codes: dict[str, dict] = {}
        self.delays: dict[str, float] = {}
        self.failing: dict[str, str] = {}
        self.token = BOT_TOKEN
        self.lock = threading.Lock()
        slack = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                slack._handle(self)

            def do_POST(self):
                slack._handle(self)

            def log_message(self, *_args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.api_url = self.url + "/api/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset(self) -> None:
        self.calls.clear()
        self.replies.clear()
        self.users.clear()
        self.codes.clear()
        self.delays.clear()
        self.failing.clear()

    def user(self, slack_id: str, email: str | None, **fields) -> None:
        """A person of the workspace, with this email in their profile (None: Slack shares none)."""
        profile = {"real_name": slack_id} | ({"email": email} if email else {})
        self.users[slack_id] = {
            "id": slack_id,
            "team_id": TEAM_ID,
            "deleted": False,
            "is_bot": False,
            "profile": profile,
        } | fields

    def code(self, code: str, *, team_id: str = TEAM_ID, token: str = BOT_TOKEN) -> None:
        """An authorization code `oauth.v2.access` exchanges once for a bot token of `team_id`."""
        self.codes[code] = {"team_id": team_id, "token": token}

    def calls_of(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    def response_url(self, name: str) -> str:
        return f"{self.url}/respond/{name}"

    def _handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        path, _, query = handler.path.partition("?")
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        if handler.headers.get_content_type() == "application/json":
            arguments = json.loads(raw or b"{}")
        else:
            arguments = {name: values[0] for name, values in urllib.parse.parse_qs(raw.decode()).items()}
        arguments |= {name: values[0] for name, values in urllib.parse.parse_qs(query).items()}
        if path.startswith("/respond/"):
            with self.lock:
                self.replies.append((path.removeprefix("/respond/"), arguments))
            self._answer(handler, 200, {"ok": True})
            return
        method = path.removeprefix("/api/")
        authorization = handler.headers.get("Authorization", "")
        token = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None
        with self.lock:
            self.calls.append(Call(method, arguments, token))
        time.sleep(self.delays.get(method, 0))
        if method in self.failing:
            self._answer(handler, 200, {"ok": False, "error": self.failing[method]})
            return
        if method == "oauth.v2.access":
            self._answer(handler, 200, self._oauth(authorization, arguments))
            return
        if token != self.token:
            self._answer(handler, 200, {"ok": False, "error": "invalid_auth"})
            return
        self._answer(handler, 200, self._method(method, arguments))

    def _oauth(self, authorization: str, arguments: dict) -> dict:
        expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if authorization != expected:
            return {"ok": False, "error": "invalid_client"}
        grant = self.codes.pop(arguments.get("code"), None)
        if grant is None:
            return {"ok": False, "error": "invalid_code"}
        return {
            "ok": True,
            "access_token": grant["token"],
            "token_type": "bot",
            "scope": "commands,chat:write,users:read,users:read.email",
            "bot_user_id": "U0KINDLING",
            "app_id": "A0KINDLING",
            "team": {"id": grant["team_id"], "name": "Kindly Co"},
            "enterprise": None,
            "authed_user": {"id": "U0ADMIN"},
        }

    def _method(self, method: str, arguments: dict) -> dict:
        if method == "users.info":
            user = self.users.get(arguments.get("user"))
            return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}
        if method == "chat.postMessage":
            return {"ok": True, "channel": "D" + arguments["channel"][1:], "ts": f"{time.time():.6f}"}
        if method in ("views.open", "views.publish"):
            return {"ok": True, "view": {"id": "V0VIEW"} | arguments.get("view", {})}
        return {"ok": False, "error": "unknown_method"}

    @staticmethod
    def _answer(handler: http.server.BaseHTTPRequestHandler, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def fake_slack_server():
    slack = FakeSlack()
    yield slack
    slack.close()


@pytest.fixture
def fake_slack(fake_slack_server):
    """The fake Slack, emptied for the test."""
    fake_slack_server.reset()
    yield fake_slack_server
    fake_slack_server.reset()
