"""Assertions and calls the test modules share (factories are in tests/factories)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import requests

from kindling.themes import TOKEN_NAMES, check_theme
from tests.factories import PASSWORD

OUTSIDER_ACT = {
    "description": "Kept the lights on",
    "category": "community",
    "verificationLevel": 1,
    "recipientId": "outsider",
}


def assert_envelope(response, status: int, code: str | None = None) -> dict:
    """`response` is the error envelope `{error, code, details?}` with `status` (and `code`, if given)."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert isinstance(body["error"], str) and body["error"]
    if code is not None:
        assert body.get("code") == code, body
    assert "Traceback" not in response.text
    return body


def call(server, method: str, path: str, token: str | None = None, **kwargs) -> requests.Response:
    """A request to a live server as the session `token`, which must succeed."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = requests.request(method, server.url + path, headers=headers, timeout=10, **kwargs)
    assert response.status_code in (200, 201), response.text
    return response


@dataclass
class SignedUp:
    """An account a live server created."""

    id: str
    email: str
    token: str

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}


def sign_up(url: str, *, headers: dict | None = None, **fields) -> SignedUp:
    """An account signed up over HTTP at the server `url`: the admin of a new organization
    unless `fields` give a `joinCode` or an `accountType`; `fields` replace the defaults."""
    unique = uuid.uuid4().hex
    body = {
        "email": f"person-{unique}@example.test",
        "password": PASSWORD,
        "name": "Person",
        "returnToken": True,
        **fields,
    }
    if not {"joinCode", "accountType"} & fields.keys():
        body.setdefault("organizationName", f"Organization {unique[:8]}")
    response = requests.post(f"{url}/api/auth/sign-up", json=body, headers=headers, timeout=30)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    return SignedUp(data["user"]["id"], body["email"], data["session"]["token"])


class Caller:
    """An organization admin signed up over HTTP, calling one server or another with its token."""

    def __init__(self, server) -> None:
        account = sign_up(server.url)
        self.email, self.headers = account.email, account.headers

    def requests(self, server) -> dict:
        """One of each kind of request: anonymous, signed in, reading and writing."""
        url = server.url
        return {
            "health": lambda: requests.get(f"{url}/api/health", timeout=10),
            "sign-in": lambda: requests.post(
                f"{url}/api/auth/sign-in", json={"email": self.email, "password": PASSWORD}, timeout=10
            ),
            "session": lambda: requests.get(f"{url}/api/auth/session", headers=self.headers, timeout=10),
            "list": lambda: requests.get(f"{url}/api/kindness", headers=self.headers, timeout=10),
            "stats": lambda: requests.get(f"{url}/api/kindness/stats", headers=self.headers, timeout=10),
            "create": lambda: requests.post(f"{url}/api/kindness", json=OUTSIDER_ACT, headers=self.headers, timeout=10),
        }

    def remaining(self, server) -> int:
        response = requests.get(f"{server.url}/api/auth/session", headers=self.headers, timeout=10)
        return int(response.headers["x-ratelimit-remaining"])


def assert_sound(theme: dict) -> None:
    """Exactly the 31 tokens per mode, all inside sRGB, every pair at 4.5:1 or more."""
    assert set(theme) == {"light", "dark"}
    assert all(set(theme[mode]) == set(TOKEN_NAMES) for mode in theme)
    report = check_theme(theme)
    assert report["failingPairs"] == [] and report["outOfGamut"] == []
