"""Every failure, from a handler or from Connexion itself, answers with the envelope (§10)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from sqlalchemy import func, select

from kindling.requestguard import RequestGuardMiddleware
from kindling.errors import PayloadTooLarge
from kindling.persistence.accounts import User
from kindling.services import accounts


def assert_envelope(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert isinstance(body["error"], str) and body["error"]
    assert body.get("code") == code
    assert "Traceback" not in response.text
    return body


def test_body_validation(client):
    response = client.post("/api/auth/sign-in", json={"email": "a@b.test"})
    body = assert_envelope(response, 400, "validation_error")
    assert "password" in body["error"]


def test_body_of_the_wrong_type(client):
    assert_envelope(client.post("/api/auth/sign-in", json=["not", "an", "object"]), 400, "validation_error")


def test_malformed_json(client):
    response = client.post("/api/auth/sign-in", content=b"{not json", headers={"Content-Type": "application/json"})
    assert_envelope(response, 400, "validation_error")


def test_body_that_is_not_utf8(client):
    response = client.post("/api/auth/sign-in", content=b'{"email": "\xa8"}', headers={"Content-Type": "application/json"})
    assert_envelope(response, 400, "validation_error")


def test_unknown_route(client):
    assert_envelope(client.get("/api/no-such-thing"), 404, "not_found")


def test_wrong_method(client):
    assert_envelope(client.delete("/api/health"), 405, "method_not_allowed")


def test_unsupported_media_type(client):
    response = client.post("/api/auth/sign-in", content=b"email=a", headers={"Content-Type": "text/plain"})
    assert_envelope(response, 415, "unsupported_media_type")


def test_body_too_large_by_content_length(client):
    response = client.post("/api/auth/sign-in", json={"email": "a@b.test", "password": "x" * (70 * 1024)})
    assert_envelope(response, 413, "payload_too_large")


def test_body_too_large_while_streaming():
    """A chunked body without Content-Length is counted as it arrives and refused mid-stream."""
    chunks = [{"type": "http.request", "body": b" " * 1024, "more_body": True} for _ in range(70)]

    async def receive():
        return chunks.pop(0)

    async def read_everything(scope, receive, send):
        while (await receive())["more_body"]:
            pass

    scope = {"type": "http", "path": "/api/auth/sign-in", "headers": [(b"content-type", b"application/json")]}
    with pytest.raises(PayloadTooLarge):
        asyncio.run(RequestGuardMiddleware(read_everything)(scope, receive, None))
    assert len(chunks) == 70 - 65  # stopped at the first chunk past 64 KB


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/auth/sign-up", b'{"email": "a@b.test", "password": "correct horse battery", "name": "A\\u0000", "organizationName": "N"}'),
        ("/api/auth/sign-in", b'{"email": "a\\u0000@b.test", "password": "x"}'),
        ("/api/auth/sign-in?x=%00", b'{"email": "a@b.test", "password": "x"}'),
    ],
)
def test_nul_characters_are_refused(client, db, path, body):
    before = db.scalar(select(func.count()).select_from(User))
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert_envelope(response, 400, "validation_error")
    assert db.scalar(select(func.count()).select_from(User)) == before


def test_escaped_backslash_before_u0000_is_plain_text(client):
    body = b'{"email": "a\\\\u0000@b.test", "password": "wrong password"}'
    assert client.post("/api/auth/sign-in", content=body, headers={"Content-Type": "application/json"}).status_code == 401


def test_unhandled_exception_is_logged_not_shown(client, make, monkeypatch, caplog):
    account = make.admin()

    def explode(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(accounts, "get_user", explode)
    with caplog.at_level(logging.ERROR, logger="kindling.errors"):
        response = client.get("/api/auth/session", headers=account.headers)
    body = assert_envelope(response, 500, "internal_error")
    assert "secret internals" not in response.text and body["error"] == "Internal server error"
    assert any("secret internals" in str(record.exc_info[1]) for record in caplog.records if record.exc_info)


@pytest.mark.parametrize("path", ["/api/auth/session", "/api/auth/sign-out"])
def test_unauthenticated(client, path):
    method = client.post if path.endswith("sign-out") else client.get
    assert_envelope(method(path), 401, "unauthenticated")
